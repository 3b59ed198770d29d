// `kernelsweep history FILE|DIR...`: the results files of one sweep, run night after night, as a
// history (src/history/): each point's medians lined up across the runs, the steps in each series
// found and told from noise, printed, and with --fail-on-step a gate for a nightly CI job.
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "common/printable.h"
#include "report/commands.h"
#include "report/judged_history.h"
#include "run/run.h"

namespace ks {
namespace {

int history_bad_input(const std::string& what) {
  std::cerr << "kernelsweep history: " << printable(what) << "\n";
  return kExitBadInput;
}

// The points --fail-on-step fails on, named on one line.
int fail_on_slower_points(const HistoryReport& report) {
  std::vector<std::string> names;
  for (const PointHistory& point : report.points) {
    if (!point.slower_now()) continue;
    const auto& identity = point.series->identity;
    names.push_back(fmt::format("{} {} {} {} ({:+.1f}% since run {})", identity.kernel, identity.implementation,
                                identity.mode, parameters_text(point.series->params),
                                point.steps.steps.back().change_pct(), point.steps.steps.back().run));
  }
  if (names.empty()) return kExitOk;
  constexpr std::size_t kNamed = 5;
  std::string list = fmt::format("{}", fmt::join(names.begin(), names.begin() + std::min(names.size(), kNamed), "; "));
  if (names.size() > kNamed) list += fmt::format("; and {} more", names.size() - kNamed);
  std::cerr << fmt::format(
      "kernelsweep history: {} point{} slower since a step of more than {:g}% (--fail-on-step): {}\n", names.size(),
      names.size() == 1 ? " is" : "s are", report.rule.min_change_pct, list);
  return kExitFailure;
}

}  // namespace

int print_history(const HistoryRequest& request) {
  std::unique_ptr<JudgedHistory> judged;
  try {
    judged = judge_history(request.query);
  } catch (const history::HistoryInputError& error) { return history_bad_input(error.what()); }
  HistoryReport& report = judged->report;
  report.fail_on_step = request.fail_on_step;
  const std::string text = history_text(report, request.format);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return request.fail_on_step ? fail_on_slower_points(report) : kExitOk;
}

}  // namespace ks
