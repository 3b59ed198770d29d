#include "report/history_report.h"

#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "common/printable.h"
#include "report/judged_history.h"
#include "report/page_writer.h"
#include "run/run.h"

namespace ks {
namespace {

// Bad input: one line on stderr, exit code 2, as the report's other refusals.
int refuse_history_report(const std::string& what) {
  std::fprintf(stderr, "kernelsweep report: %s\n", printable(what).c_str());
  return kExitBadInput;
}

}  // namespace

int write_history_report(const ReportRequest& request) {
  std::unique_ptr<JudgedHistory> judged;
  try {
    judged = judge_history({request.files, request.order, request.where, request.min_change_percent});
  } catch (const history::HistoryInputError& error) { return refuse_history_report(error.what()); }
  const std::filesystem::path directory = request.output_directory;
  if (const std::string why = report_page::make_output_folder(directory); !why.empty())
    return refuse_history_report(why);

  const HistoryReport& report = judged->report;
  const report_page::HistoryPage page{&report, report_page::choose_timelines(report, request.timelines == "all"),
                                      request.timelines == "all", request.where};
  const report_page::DrawnPlots plots = report_page::draw_timelines(page.timelines.drawn, report, directory);
  report_page::write_page(directory / "index.html", report_page::history_html_page(page, plots));
  report_page::write_page(directory / "report.md", report_page::history_markdown_page(page, plots));

  std::printf("report: %s and %s (%zu points over %zu runs, %zu timelines)\n", (directory / "index.html").c_str(),
              (directory / "report.md").c_str(), report.points.size(), report.history->runs.size(),
              plots.inline_svg.size());
  if (plots.why_not.empty()) return kExitOk;
  std::fprintf(stderr, "kernelsweep report: %s\n", plots.why_not.c_str());
  return plots.gnuplot_failed ? kExitFailure : kExitOk;
}

}  // namespace ks
