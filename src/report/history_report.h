#pragma once
// `kernelsweep report FILE|DIR... -o DIR --history`: the runs of one sweep as a report
// (docs/report.md, "A history"): DIR/index.html and DIR/report.md with the steps found, slowest
// first, and a timeline of each point with a step (of every point with --timelines all), drawn by
// gnuplot into DIR/plots/. The history is read as `kernelsweep history` reads it (judged_history.h):
// what is held is the series, 8 bytes a point a run, never the files' contents.
#include <string>

#include "report/commands.h"
#include "report/gnuplot.h"
#include "report/history_timelines.h"

namespace ks {

int write_history_report(const ReportRequest& request);

namespace report_page {

// What the two pages of a history report show.
struct HistoryPage {
  const HistoryReport* report = nullptr;
  ChosenTimelines timelines;
  bool every_point = false;  // --timelines all
  std::string where;         // --where, as given
};

// DIR/index.html (timelines inline) and DIR/report.md (timelines linked from DIR/plots/).
std::string history_html_page(const HistoryPage& page, const DrawnPlots& plots);
std::string history_markdown_page(const HistoryPage& page, const DrawnPlots& plots);

}  // namespace report_page
}  // namespace ks
