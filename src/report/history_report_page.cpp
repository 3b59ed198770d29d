// The two pages of `report --history`: the runs and the rule, the steps found (slowest first), the
// timelines by kernel, and the runs in order.
#include <algorithm>

#include <fmt/format.h>

#include "build_info.h"
#include "report/history_report.h"
#include "report/page_writer.h"
#include "view/view.h"

namespace ks::report_page {
namespace {

// A step of a point as the steps table lists it; `pending` for the latest run alone off its level.
struct FoundStep {
  const PointHistory* point = nullptr;
  history::Step step;
  bool pending = false;
};

// Every step, the largest change first (the worst slowdown leads, the largest speed-up comes last),
// then the pending latest runs alike: a pending run may yet be an outlier. Ties keep the report's order.
std::vector<FoundStep> steps_slowest_first(const HistoryReport& report) {
  std::vector<FoundStep> found;
  for (const PointHistory& point : report.points) {
    for (const history::Step& step : point.steps.steps) found.push_back({&point, step, false});
    if (point.steps.pending) found.push_back({&point, *point.steps.pending, true});
  }
  std::stable_sort(found.begin(), found.end(), [](const FoundStep& a, const FoundStep& b) {
    if (a.pending != b.pending) return b.pending;
    return a.step.change_pct() > b.step.change_pct();
  });
  return found;
}

Table steps_table(const HistoryReport& report) {
  Table table{{"kernel", "implementation", "mode", "device", "parameters", "step", "at", "run", "before ms", "after ms",
               "change"},
              {false, false, false, false, false, false, true, false, true, true, true},
              {},
              {},
              {}};
  for (const FoundStep& found : steps_slowest_first(report)) {
    const history::PointSeries& series = *found.point->series;
    const std::string kind = found.pending ? "pending" : found.step.slowdown() ? "slowdown" : "speed-up";
    table.rows.push_back({series.identity.kernel, series.identity.implementation, series.identity.mode,
                          series.identity.device, parameters_text(series.params), kind, std::to_string(found.step.run),
                          report.history->runs[found.step.run].name(), history_ms(found.step.before_ns),
                          history_ms(found.step.after_ns), fmt::format("{:+.1f}%", found.step.change_pct())});
    table.row_ids.push_back(series.identity.point_id);
    table.row_classes.push_back(kind);
  }
  return table;
}

Table runs_table(const history::History& history) {
  Table table{{"run", "file", "time", "labels"}, {true, false, false, false}, {}, {}, {}};
  for (std::size_t i = 0; i < history.runs.size(); ++i) {
    const auto& run = history.runs[i];
    table.rows.push_back({std::to_string(i), run.file, run.time, labels_text(run.labels)});
  }
  return table;
}

std::string timelines_sentence(const HistoryPage& page) {
  const std::string key = tick_label(*page.report->history);
  return fmt::format(
      "{} Each plots a point's median in every run (blue; a run that did not measure it is left out) against the "
      "run's position in the history, the ticks naming runs by {}; its levels between steps (black), and a dashed "
      "line where each step begins, labelled with its run and change (red a slowdown, green a speed-up, orange the "
      "latest run alone).",
      page.every_point ? "A timeline for every point kept (--timelines all)."
                       : "A timeline for each point with a step or a pending latest run; --timelines all draws every "
                         "point kept (narrow them with --where).",
      key.empty() ? "their position" : "their label " + key);
}

void timelines_of_kernel(const HistoryPage& page, const std::string& kernel, Page& out) {
  out.open_section("timelines-" + slug(kernel), "Timelines: " + kernel);
  for (const Timeline& timeline : page.timelines.drawn)
    if (timeline.point->series->identity.kernel == kernel) out.figure(timeline.name, timeline.title, "");
  out.close_section();
}

std::vector<std::string> timeline_kernels(const HistoryPage& page) {
  std::vector<std::string> kernels;
  for (const Timeline& timeline : page.timelines.drawn)
    if (kernels.empty() || kernels.back() != timeline.point->series->identity.kernel)
      kernels.push_back(timeline.point->series->identity.kernel);
  return kernels;
}

void steps_section(const HistoryPage& page, Page& out) {
  out.open_section("steps", "Steps");
  const Table table = steps_table(*page.report);
  if (table.rows.empty()) {
    out.paragraph("No point has a step: every level held within its noise and --min-change.");
  } else {
    out.paragraph(
        "Every step found, the largest change first: the run where the new level begins (its position and its "
        "labels), the levels before and after, and the change. Pending rows come last: the latest run alone off "
        "its level, a step if the next run agrees.");
    out.table(table);
  }
  out.close_section();
}

std::string history_page_text(const HistoryPage& page, const DrawnPlots& plots, bool html) {
  const HistoryReport& report = *page.report;
  Page out(html, plots);
  out.begin(fmt::format("kernelsweep report: history of {} runs", report.history->runs.size()));
  std::string runs = history_runs(report);
  runs[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(runs[0])));
  out.paragraph(runs + ".", Emphasis::hardware);
  out.paragraph("Method: " + history_method(report.rule) + ".");
  out.paragraph(history_summary(report) + ".");
  if (!page.where.empty()) out.paragraph_with_code("Points kept: ", "--where " + page.where, ".");
  if (!plots.why_not.empty()) out.paragraph(plots.why_not + ".", Emphasis::note);
  const std::vector<std::string> kernels = timeline_kernels(page);
  std::vector<std::pair<std::string, std::string>> contents{{"steps", "Steps"}};
  for (const auto& kernel : kernels) contents.emplace_back("timelines-" + slug(kernel), "Timelines: " + kernel);
  contents.emplace_back("runs", "Runs");
  out.contents(contents);
  steps_section(page, out);
  out.paragraph(timelines_sentence(page), Emphasis::caption);
  if (page.timelines.left_out > 0)
    out.paragraph(fmt::format("{} more point{} would have a timeline and {} not drawn: a report draws {} at most; "
                              "narrow the points with --where.",
                              page.timelines.left_out, page.timelines.left_out == 1 ? "" : "s",
                              page.timelines.left_out == 1 ? "is" : "are", kMaxTimelines),
                  Emphasis::note);
  for (const auto& kernel : kernels) timelines_of_kernel(page, kernel, out);
  out.open_section("runs", "Runs");
  out.table(runs_table(*report.history));
  out.close_section();
  out.end(fmt::format("Written by kernelsweep {} (git {}).", build::version, build::git_commit));
  return std::move(out.text());
}

}  // namespace

std::string history_html_page(const HistoryPage& page, const DrawnPlots& plots) {
  return history_page_text(page, plots, true);
}

std::string history_markdown_page(const HistoryPage& page, const DrawnPlots& plots) {
  return history_page_text(page, plots, false);
}

}  // namespace ks::report_page
