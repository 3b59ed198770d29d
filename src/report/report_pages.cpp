#include "report/report_plots.h"

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

// How a speed-up or a fraction is worked out, and against what: the option as given, or by default.
std::string ratio_sentence(const char* title, const std::string& role, const char* meaning, const std::string& option,
                           const char* by_default) {
  std::string role_title = role;
  role_title[0] = static_cast<char>(role[0] - 'a' + 'A');
  return fmt::format(
      "{}: the {}'s median divided by the point's, between points of one kernel, mode and parameters ({}). {}: {}.",
      title, role, meaning, role_title, option.empty() ? by_default : fmt::format("{} (--{})", option, role));
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

// --- the pages --------------------------------------------------------------------------------------

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

// How a paragraph stands out: in HTML by its class, in markdown by its markup.
enum class Emphasis { none, hardware, hardware_differs, note, caption };

// One of the two pages as it is written: the same things said in HTML (every text escaped) or in
// markdown.
class Page {
 public:
  Page(bool html, const DrawnPlots& plots) : html_(html), plots_(plots) {}
  std::string& text() { return out_; }

  // The page's start, with its title as its first heading.
  void begin(const std::string& title) {
    if (!html_) {
      out_ += fmt::format("# {}\n\n", title);
      return;
    }
    out_ += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    out_ += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out_ += fmt::format("<title>{0}</title>\n<style>{1}</style>\n</head>\n<body>\n<h1>{0}</h1>\n", html_escape(title),
                        kStyle);
  }
  void end(const std::string& footer) {
    out_ += html_ ? fmt::format("<footer>{}</footer>\n</body>\n</html>\n", html_escape(footer)) : footer + "\n";
  }
  // A part of the page under its heading; `id` is its anchor in HTML.
  void open_section(const std::string& id, const std::string& heading) {
    out_ += html_ ? fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n", id, html_escape(heading))
                  : fmt::format("## {}\n\n", heading);
  }
  void close_section() {
    if (html_) out_ += "</section>\n";
  }
  void subheading(const std::string& text) {
    out_ += html_ ? fmt::format("<h3>{}</h3>\n", html_escape(text)) : fmt::format("### {}\n\n", text);
  }
  void paragraph(const std::string& text, Emphasis emphasis = Emphasis::none) {
    if (html_) {
      static constexpr const char* kClasses[] = {"", " class=\"hardware\"", " class=\"hardware differs\"",
                                                 " class=\"note\"", " class=\"caption\""};
      out_ += fmt::format("<p{}>{}</p>\n", kClasses[static_cast<std::size_t>(emphasis)], html_escape(text));
    } else {
      const bool bold = emphasis == Emphasis::hardware || emphasis == Emphasis::hardware_differs;
      out_ += (bold ? "**" + text + "**" : emphasis == Emphasis::note ? "> " + text : text) + "\n\n";
    }
  }
  // A paragraph with a piece of code in it: an option, a digest.
  void paragraph_with_code(const std::string& before, const std::string& code, const std::string& after) {
    out_ +=
        html_ ? fmt::format("<p>{}<code>{}</code>{}</p>\n", html_escape(before), html_escape(code), html_escape(after))
              : fmt::format("{}`{}`{}\n\n", before, code, after);
  }
  void list(const std::vector<std::string>& items) {
    if (html_) out_ += "<ul>\n";
    for (const auto& item : items) out_ += html_ ? fmt::format("<li>{}</li>\n", html_escape(item)) : "- " + item + "\n";
    out_ += html_ ? "</ul>\n" : "\n";
  }
  // The HTML page's table of contents, to the sections' anchors: (id, title) each.
  void contents(const std::vector<std::pair<std::string, std::string>>& entries) {
    if (!html_) return;
    out_ += "<nav><h2>Contents</h2><ul>\n";
    for (const auto& [id, title] : entries)
      out_ += fmt::format("<li><a href=\"#{}\">{}</a></li>\n", id, html_escape(title));
    out_ += "</ul></nav>\n";
  }
  // In HTML, the column headed `message_column` wraps its lines.
  void table(const Table& table, const char* message_column = "") {
    if (html_) out_ += html_table(table, message_column);
    else out_ += markdown_table(table);
  }
  void figure(const std::string& name, const std::string& title, const std::string& caption) {
    const bool drawn = plots_.inline_svg.count(name) > 0;
    const std::string why = plots_.why_not.empty() ? "" : " (" + plots_.why_not + ")";
    if (html_) {
      out_ += "<figure>\n";
      if (drawn) out_ += plots_.inline_svg.at(name);
      else out_ += fmt::format("<p class=\"note\">{}: not drawn{}</p>", html_escape(title), html_escape(why));
      if (!caption.empty())
        out_ += fmt::format("<figcaption class=\"caption\">{}</figcaption>\n", html_escape(caption));
      out_ += "</figure>\n";
      return;
    }
    if (drawn) out_ += fmt::format("![{}](plots/{}.svg)\n\n", markdown_cell(title), name);
    else out_ += fmt::format("{}: not drawn{}.\n\n", title, why);
    if (!caption.empty()) out_ += fmt::format("*{}.*\n\n", caption);
  }

 private:
  static std::string html_table(const Table& table, const char* message_column) {
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

  static std::string markdown_table(const Table& table) {
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

  bool html_;
  const DrawnPlots& plots_;
  std::string out_;
};

void kernel_section(const KernelSection& section, const ReportModel& model, Page& page) {
  page.open_section("kernel-" + slug(section.kernel), section.kernel);
  page.paragraph(section_sentence(section));
  for (const auto& plot : section.line_plots) page.figure(plot.name, plot.title, plot.note);
  for (const auto& plot : section.rooflines) page.figure(plot.name, plot.title, plot.caption);
  if (!section.no_roofline.empty()) page.paragraph(section.no_roofline, Emphasis::caption);
  if (!section.speedups.empty()) {
    page.subheading("Speed-up over " + section.baseline);
    page.figure(section.speedup_plot, section.kernel + " speed-ups", "");
    page.table(speedups_table(section));
  }
  page.subheading("Points");
  page.table(points_table(section, several_files(model)));
  if (std::any_of(section.rows.begin(), section.rows.end(),
                  [](const auto& r) { return r.row->run.status != "passed"; })) {
    page.subheading("Failures");
    page.table(failures_table(section, several_files(model)), "message");
  }
  page.close_section();
}

// After the files and before the kernels, and only where there is something to say.
void speed_of_light(const ReportModel& model, Page& page) {
  if (!model.flagged.empty()) {
    page.open_section("flagged", "Flagged points");
    page.paragraph(kFlaggedSentence);
    page.table(flagged_table(model), "what it means");
    page.close_section();
  }
  if (model.slow_ranks.empty()) return;
  page.open_section("slow-ranks", "Slow ranks");
  page.paragraph(slow_ranks_sentence());
  std::vector<std::string> lines;
  for (const auto& note : model.slow_ranks) lines.push_back(slow_rank_line(note, several_files(model)));
  page.list(lines);
  page.close_section();
}

void documents(const char* id, const char* heading, const std::vector<CitedDocument>& documents, Page& page) {
  page.open_section(id, heading);
  if (documents.empty()) page.paragraph("None cited.");
  for (const auto& doc : documents) {
    page.subheading(doc.title);
    page.paragraph_with_code("", doc.digest, ": cited by " + cited_sentence(doc) + ".");
    if (!doc.fields.empty()) page.table(document_table(doc));
  }
  page.close_section();
}

std::string page_text(const ReportModel& model, const DrawnPlots& plots, bool html) {
  Page page(html, plots);
  page.text().reserve(4096 + model.view.size() * (html ? 700 : 300));
  std::vector<std::string> sweeps;
  for (const auto& f : model.files) sweeps.push_back(f.info.sweep_name);
  page.begin(fmt::format("kernelsweep report: {}", fmt::join(sweeps, ", ")));
  const bool differs = model.hardware_statement.find("different hardware") != std::string::npos;
  page.paragraph(model.hardware_statement, differs ? Emphasis::hardware_differs : Emphasis::hardware);
  page.paragraph(summary_sentence(model));
  page.table(files_table(model));
  page.paragraph(ratio_sentence("Speed-up", "baseline", "above 1: faster than the baseline", model.baseline_option,
                                "each kernel's cpu implementation, or its first implementation alphabetically where it "
                                "has none"));
  // Said only where some kernel has a reference.
  if (!model.reference_option.empty() ||
      std::any_of(model.kernels.begin(), model.kernels.end(), [](const auto& k) { return !k.reference.empty(); }))
    page.paragraph(ratio_sentence("Fraction of the reference", "reference", "1: as fast as the reference",
                                  model.reference_option,
                                  "each kernel's gemm_floor (its matrix products alone) where it was measured"));
  if (!model.where.empty()) page.paragraph_with_code("Points kept: ", "--where " + model.where, ".");
  if (!plots.why_not.empty()) page.paragraph(plots.why_not + ".", Emphasis::note);
  speed_of_light(model, page);
  std::vector<std::pair<std::string, std::string>> contents;
  if (!model.flagged.empty()) contents.emplace_back("flagged", "Flagged points");
  if (!model.slow_ranks.empty()) contents.emplace_back("slow-ranks", "Slow ranks");
  for (const auto& section : model.kernels) contents.emplace_back("kernel-" + slug(section.kernel), section.kernel);
  contents.emplace_back("environments", "Environments");
  contents.emplace_back("protocols", "Protocols");
  page.contents(contents);
  for (const auto& section : model.kernels) kernel_section(section, model, page);
  documents("environments", "Environments", model.environments, page);
  documents("protocols", "Protocols", model.protocols, page);
  page.end(fmt::format("Written by kernelsweep {} (git {}).", build::version, build::git_commit));
  return std::move(page.text());
}

}  // namespace

std::string html_page(const ReportModel& model, const DrawnPlots& plots) { return page_text(model, plots, true); }

std::string markdown_page(const ReportModel& model, const DrawnPlots& plots) { return page_text(model, plots, false); }

}  // namespace ks::report_page
