#include "report/report_plots.h"

#include <algorithm>

#include <fmt/format.h>

#include "build_info.h"
#include "report/page_writer.h"
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
