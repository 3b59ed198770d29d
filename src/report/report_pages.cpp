#include "report/report_pages.h"

#include <algorithm>

#include <fmt/format.h>

#include "build_info.h"
#include "report/report_format.h"
#include "report/report_tables.h"

namespace ks::report_page {
namespace {

bool several_files(const ReportModel& model) { return model.files.size() > 1; }

// --- what both pages say ---------------------------------------------------------------------------

std::string summary_sentence(const ReportModel& model) {
  return fmt::format("{} points of {} kernel{} from {} results file{}; {} did not pass.", model.view.size(),
                     model.kernels.size(), model.kernels.size() == 1 ? "" : "s", model.files.size(),
                     model.files.size() == 1 ? "" : "s", model.failures);
}

std::string speedup_sentence(const ReportModel& model) {
  const std::string baseline =
      model.baseline_option.empty()
          ? "each kernel's cpu implementation, or its first implementation alphabetically where it has none"
          : model.baseline_option + " (--baseline)";
  return "Speed-up: the baseline's median divided by the point's, between points of one kernel, mode and "
         "parameters (above 1: faster than the baseline). Baseline: " +
         baseline + ".";
}

// Empty when no kernel has a reference.
std::string fraction_sentence(const ReportModel& model) {
  const bool any = std::any_of(model.kernels.begin(), model.kernels.end(),
                               [](const KernelSection& section) { return !section.reference.empty(); });
  if (!any && model.reference_option.empty()) return "";
  const std::string reference = model.reference_option.empty()
                                    ? "each kernel's gemm_floor (its matrix products alone) where it was measured"
                                    : model.reference_option + " (--reference)";
  return "Fraction of the reference: the reference's median divided by the point's, between points of one kernel, "
         "mode and parameters (1: as fast as the reference). Reference: " +
         reference + ".";
}

std::string section_sentence(const KernelSection& section) {
  std::string out = fmt::format("{} points; modes: {}; implementations: {}.", section.rows.size(),
                                fmt::join(section.modes, ", "), fmt::join(section.labels, ", "));
  if (!section.fixed.empty()) {
    std::vector<std::string> fixed;
    for (const auto& [name, value] : section.fixed) fixed.push_back(name + "=" + value);
    out += fmt::format(" Every point has {}.", fmt::join(fixed, " "));
  }
  if (!section.swept_parameter.empty())
    out += fmt::format(" Plotted against {}, the parameter that varies most.", section.swept_parameter);
  if (!section.baseline.empty()) out += fmt::format(" Baseline: {}.", section.baseline);
  if (!section.reference.empty()) out += fmt::format(" Reference: {}.", section.reference);
  if (!section.notes.empty()) out.append(" ").append(section.notes, 0, section.notes.size() - 1);
  return out;
}

std::size_t failures_of(const KernelSection& section) {
  std::size_t n = 0;
  for (const auto& r : section.rows) n += r.row->run.status != "passed";
  return n;
}

constexpr const char* kFlaggedSentence =
    "These points' figures are not to be taken as they stand (docs/speed-of-light.md): implausible points are "
    "kept and shown, and left out of every speed-up and fraction. Points flagged in-cache (which only says that a "
    "small point may run from the cache) are left to the points tables' flags column.";

std::string slow_ranks_sentence() {
  return fmt::format(
      "These ranks were calibrated {} the median of the ranks with the same device: their points are slower "
      "for the rank, not for the code.",
      slow_rule());
}

std::string slow_rank_line(const SlowRankNote& note, bool several_files) {
  const std::string points = note.points == 0
                                 ? "it measured no points"
                                 : fmt::format("it measured {} point{}", note.points, note.points == 1 ? "" : "s");
  return fmt::format("{}{}; {}.", several_files ? note.file + ": " : "", note.rank.describe(), points);
}

std::string cited_sentence(const CitedDocument& document) {
  return fmt::format("{} point{}{}", document.points, document.points == 1 ? "" : "s",
                     document.files.empty() ? "" : "; in " + fmt::format("{}", fmt::join(document.files, ", ")));
}

// --- HTML ------------------------------------------------------------------------------------------

constexpr const char* kStyle = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px auto; max-width: 1400px;
       padding: 0 16px; color: #1d2430; background: #fff; line-height: 1.45; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; }
h2 { margin-top: 2em; padding-bottom: 0.2em; border-bottom: 2px solid #d9dee7; }
h3 { margin-top: 1.4em; }
code { background: #f2f4f8; padding: 1px 4px; border-radius: 3px; font-size: 0.92em; }
.hardware { font-weight: 600; background: #eef4ff; border-left: 4px solid #3d6fd8; padding: 8px 12px; }
.hardware.differs { background: #fff5e6; border-left-color: #e08a00; }
.note { color: #7a4b00; background: #fff8e8; padding: 6px 10px; border-left: 4px solid #e0a800; }
.caption { color: #556; font-size: 0.9em; }
nav ul { columns: 3; }
.scroll { overflow-x: auto; max-height: 720px; overflow-y: auto; border: 1px solid #e3e7ee; }
table { border-collapse: collapse; font-size: 0.86em; }
th, td { padding: 3px 9px; border-bottom: 1px solid #eceff4; text-align: left; white-space: nowrap; }
th { background: #f5f7fa; position: sticky; top: 0; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
td.message { white-space: normal; min-width: 30em; }
tr:nth-child(even) td { background: #fafbfd; }
tr.failed td, tr.error td, tr.crashed td, tr.timeout td { background: #fff0f0; }
tr.skipped td { color: #778; }
figure { margin: 1em 0; }
figure svg { width: 100%; max-width: 900px; height: auto; display: block; }
footer { margin-top: 3em; color: #889; font-size: 0.85em; }
)";

std::string html_table(const Table& table, const char* message_column = "") {
  std::string out = "<div class=\"scroll\"><table>\n<thead><tr>";
  for (std::size_t c = 0; c < table.headers.size(); ++c)
    out += fmt::format("<th{}>{}</th>", table.numeric[c] ? " class=\"n\"" : "", html_escape(table.headers[c]));
  out += "</tr></thead>\n<tbody>\n";
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    out += "<tr";
    if (r < table.row_classes.size()) out += fmt::format(" class=\"{}\"", slug(table.row_classes[r]));
    if (r < table.row_ids.size()) out += fmt::format(" data-point=\"{}\"", html_escape(table.row_ids[r]));
    out += ">";
    for (std::size_t c = 0; c < table.rows[r].size(); ++c) {
      const bool message = table.headers[c] == message_column;
      out += table.numeric[c] ? "<td class=\"n\">" : message ? "<td class=\"message\">" : "<td>";
      out += html_escape(table.rows[r][c]);
      out += "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

std::string html_figure(const std::string& name, const std::string& title, const std::string& caption,
                        const DrawnPlots& plots) {
  std::string out = "<figure>\n";
  const auto svg = plots.inline_svg.find(name);
  if (svg != plots.inline_svg.end()) {
    out += svg->second;
  } else {
    out += fmt::format("<p class=\"note\">{}: not drawn{}</p>", html_escape(title),
                       plots.why_not.empty() ? "" : " (" + html_escape(plots.why_not) + ")");
  }
  if (!caption.empty()) out += fmt::format("<figcaption class=\"caption\">{}</figcaption>\n", html_escape(caption));
  return out + "</figure>\n";
}

void html_section(const KernelSection& section, const ReportModel& model, const DrawnPlots& plots, std::string& out) {
  out += fmt::format("<section id=\"kernel-{}\">\n<h2>{}</h2>\n", slug(section.kernel), html_escape(section.kernel));
  out += fmt::format("<p>{}</p>\n", html_escape(section_sentence(section)));
  for (const auto& plot : section.line_plots) out += html_figure(plot.name, plot.title, plot.note, plots);
  for (const auto& plot : section.rooflines) out += html_figure(plot.name, plot.title, plot.caption, plots);
  if (!section.no_roofline.empty())
    out += fmt::format("<p class=\"caption\">{}</p>\n", html_escape(section.no_roofline));
  if (!section.speedups.empty()) {
    out += fmt::format("<h3>Speed-up over {}</h3>\n", html_escape(section.baseline));
    out += html_figure(section.speedup_plot, section.kernel + " speed-ups", "", plots);
    out += html_table(speedups_table(section));
  }
  out.append("<h3>Points</h3>\n").append(html_table(points_table(section, several_files(model))));
  if (failures_of(section) > 0)
    out.append("<h3>Failures</h3>\n").append(html_table(failures_table(section, several_files(model)), "message"));
  out += "</section>\n";
}

// After the files and before the kernels, and only where there is something to say.
void html_speed_of_light(const ReportModel& model, std::string& out) {
  if (!model.flagged.empty()) {
    out += fmt::format("<section id=\"flagged\">\n<h2>Flagged points</h2>\n<p>{}</p>\n", html_escape(kFlaggedSentence));
    out += html_table(flagged_table(model), "what it means") + "</section>\n";
  }
  if (model.slow_ranks.empty()) return;
  out += fmt::format("<section id=\"slow-ranks\">\n<h2>Slow ranks</h2>\n<p>{}</p>\n<ul>\n",
                     html_escape(slow_ranks_sentence()));
  for (const auto& note : model.slow_ranks)
    out += fmt::format("<li>{}</li>\n", html_escape(slow_rank_line(note, several_files(model))));
  out += "</ul>\n</section>\n";
}

void html_documents(const char* id, const char* heading, const std::vector<CitedDocument>& documents,
                    std::string& out) {
  out += fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n", id, heading);
  if (documents.empty()) out += "<p>None cited.</p>\n";
  for (const auto& doc : documents) {
    out += fmt::format("<h3>{}</h3>\n<p><code>{}</code>: cited by {}.</p>\n", html_escape(doc.title),
                       html_escape(doc.digest), html_escape(cited_sentence(doc)));
    if (!doc.fields.empty()) out += html_table(document_table(doc));
  }
  out += "</section>\n";
}

// --- markdown ----------------------------------------------------------------------------------------

std::string markdown_table(const Table& table) {
  std::string out = "|";
  for (const auto& h : table.headers) out.append(" ").append(markdown_cell(h)).append(" |");
  out += "\n|";
  for (std::size_t c = 0; c < table.headers.size(); ++c) out += table.numeric[c] ? "---:|" : "---|";
  out += "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (const auto& cell : row) out.append(" ").append(markdown_cell(cell)).append(" |");
    out += "\n";
  }
  return out + "\n";
}

std::string markdown_figure(const std::string& name, const std::string& title, const std::string& caption,
                            const DrawnPlots& plots) {
  std::string out;
  if (plots.inline_svg.count(name)) {
    out += fmt::format("![{}](plots/{}.svg)\n\n", markdown_cell(title), name);
  } else {
    out += fmt::format("{}: not drawn{}.\n\n", title, plots.why_not.empty() ? "" : " (" + plots.why_not + ")");
  }
  if (!caption.empty()) out += fmt::format("*{}.*\n\n", caption);
  return out;
}

void markdown_section(const KernelSection& section, const ReportModel& model, const DrawnPlots& plots,
                      std::string& out) {
  out += fmt::format("## {}\n\n{}\n\n", section.kernel, section_sentence(section));
  for (const auto& plot : section.line_plots) out += markdown_figure(plot.name, plot.title, plot.note, plots);
  for (const auto& plot : section.rooflines) out += markdown_figure(plot.name, plot.title, plot.caption, plots);
  if (!section.no_roofline.empty()) out += section.no_roofline + "\n\n";
  if (!section.speedups.empty()) {
    out += fmt::format("### Speed-up over {}\n\n", section.baseline);
    out += markdown_figure(section.speedup_plot, section.kernel + " speed-ups", "", plots);
    out += markdown_table(speedups_table(section));
  }
  out.append("### Points\n\n").append(markdown_table(points_table(section, several_files(model))));
  if (failures_of(section) > 0)
    out.append("### Failures\n\n").append(markdown_table(failures_table(section, several_files(model))));
}

void markdown_speed_of_light(const ReportModel& model, std::string& out) {
  if (!model.flagged.empty())
    out += fmt::format("## Flagged points\n\n{}\n\n{}", kFlaggedSentence, markdown_table(flagged_table(model)));
  if (model.slow_ranks.empty()) return;
  out += fmt::format("## Slow ranks\n\n{}\n\n", slow_ranks_sentence());
  for (const auto& note : model.slow_ranks) out += fmt::format("- {}\n", slow_rank_line(note, several_files(model)));
  out += "\n";
}

void markdown_documents(const char* heading, const std::vector<CitedDocument>& documents, std::string& out) {
  out += fmt::format("## {}\n\n", heading);
  if (documents.empty()) out += "None cited.\n\n";
  for (const auto& doc : documents) {
    out += fmt::format("### {}\n\n`{}`: cited by {}.\n\n", doc.title, doc.digest, cited_sentence(doc));
    if (!doc.fields.empty()) out += markdown_table(document_table(doc));
  }
}

std::string footer_text() {
  return fmt::format("Written by kernelsweep {} (git {}).", build::version, build::git_commit);
}

}  // namespace

std::string html_page(const ReportModel& model, const DrawnPlots& plots) {
  std::string out;
  out.reserve(4096 + model.view.size() * 700);
  std::vector<std::string> sweeps;
  for (const auto& f : model.files) sweeps.push_back(f.info.sweep_name);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>kernelsweep report: {}</title>\n<style>{}</style>\n</head>\n<body>\n",
                     html_escape(fmt::format("{}", fmt::join(sweeps, ", "))), kStyle);
  out += fmt::format("<h1>kernelsweep report: {}</h1>\n", html_escape(fmt::format("{}", fmt::join(sweeps, ", "))));
  const bool differs = model.hardware_statement.find("different hardware") != std::string::npos;
  out +=
      fmt::format("<p class=\"hardware{}\">{}</p>\n", differs ? " differs" : "", html_escape(model.hardware_statement));
  out += fmt::format("<p>{}</p>\n", html_escape(summary_sentence(model)));
  out += html_table(files_table(model));
  out += fmt::format("<p>{}</p>\n", html_escape(speedup_sentence(model)));
  if (const std::string fraction = fraction_sentence(model); !fraction.empty())
    out += fmt::format("<p>{}</p>\n", html_escape(fraction));
  if (!model.where.empty())
    out += fmt::format("<p>Points kept: <code>--where {}</code>.</p>\n", html_escape(model.where));
  if (!plots.why_not.empty()) out += fmt::format("<p class=\"note\">{}.</p>\n", html_escape(plots.why_not));
  html_speed_of_light(model, out);
  out += "<nav><h2>Contents</h2><ul>\n";
  if (!model.flagged.empty()) out += "<li><a href=\"#flagged\">Flagged points</a></li>\n";
  if (!model.slow_ranks.empty()) out += "<li><a href=\"#slow-ranks\">Slow ranks</a></li>\n";
  for (const auto& section : model.kernels)
    out += fmt::format("<li><a href=\"#kernel-{}\">{}</a></li>\n", slug(section.kernel), html_escape(section.kernel));
  out +=
      "<li><a href=\"#environments\">Environments</a></li>\n<li><a "
      "href=\"#protocols\">Protocols</a></li>\n</ul></nav>\n";
  for (const auto& section : model.kernels) html_section(section, model, plots, out);
  html_documents("environments", "Environments", model.environments, out);
  html_documents("protocols", "Protocols", model.protocols, out);
  out += fmt::format("<footer>{}</footer>\n</body>\n</html>\n", html_escape(footer_text()));
  return out;
}

std::string markdown_page(const ReportModel& model, const DrawnPlots& plots) {
  std::string out;
  out.reserve(4096 + model.view.size() * 300);
  std::vector<std::string> sweeps;
  for (const auto& f : model.files) sweeps.push_back(f.info.sweep_name);
  out += fmt::format("# kernelsweep report: {}\n\n", fmt::join(sweeps, ", "));
  out += fmt::format("**{}**\n\n{}\n\n", model.hardware_statement, summary_sentence(model));
  out += markdown_table(files_table(model));
  out += speedup_sentence(model) + "\n\n";
  if (const std::string fraction = fraction_sentence(model); !fraction.empty()) out += fraction + "\n\n";
  if (!model.where.empty()) out += fmt::format("Points kept: `--where {}`.\n\n", model.where);
  if (!plots.why_not.empty()) out += fmt::format("> {}.\n\n", plots.why_not);
  markdown_speed_of_light(model, out);
  for (const auto& section : model.kernels) markdown_section(section, model, plots, out);
  markdown_documents("Environments", model.environments, out);
  markdown_documents("Protocols", model.protocols, out);
  out += footer_text() + "\n";
  return out;
}

}  // namespace ks::report_page
