// `kernelsweep history FILE|DIR...`: the results files of one sweep, run night after night, as a
// history (src/history/): each point's medians lined up across the runs, the steps in each series
// found and told from noise, printed, and with --fail-on-step a gate for a nightly CI job.
#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "common/parallel.h"
#include "common/printable.h"
#include "history/history.h"
#include "history/step_detection.h"
#include "report/commands.h"
#include "report/history_output.h"
#include "run/run.h"
#include "store/h5.h"
#include "view/filter.h"

namespace ks {
namespace {

int history_bad_input(const std::string& what) {
  std::cerr << "kernelsweep history: " << printable(what) << "\n";
  return kExitBadInput;
}

// Every series' steps, found on every core.
std::vector<PointHistory> judged_points(const history::History& history, const history::StepRule& rule) {
  std::vector<PointHistory> points(history.series.size());
  in_parallel(points.size(), [&](std::size_t i) {
    PointHistory& point = points[i];
    point.series = &history.series[i];
    point.steps = history::find_steps(point.series->medians_ns, rule);
    point.in_latest_run = point.steps.runs_seen > 0 && point.steps.latest_run + 1 == history.runs.size();
  });
  return points;
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
  if (!std::isfinite(request.min_change_percent) || request.min_change_percent < 0)
    return history_bad_input(
        fmt::format("--min-change must be a percentage of 0 or more, got {}", request.min_change_percent));
  history::StepRule rule;
  rule.min_change_pct = request.min_change_percent;
  history::History history;
  try {
    const history::RunOrder order = history::parse_run_order(request.order);
    history = history::read_history(request.inputs, order, RowFilter::parse(request.where));
  } catch (const FilterError& error) {
    return history_bad_input(error.what());
  } catch (const history::HistoryInputError& error) {
    return history_bad_input(error.what());
  } catch (const ResultsFileError& error) { return history_bad_input(error.what()); }

  HistoryReport report{&history, rule, request.fail_on_step, judged_points(history, rule)};
  sort_for_reading(report.points);
  const std::string text = history_text(report, request.format);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return request.fail_on_step ? fail_on_slower_points(report) : kExitOk;
}

}  // namespace ks
