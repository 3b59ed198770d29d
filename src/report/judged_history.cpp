#include "report/judged_history.h"

#include <cmath>

#include <fmt/format.h>

#include "common/parallel.h"
#include "store/h5.h"
#include "view/filter.h"

namespace ks {
namespace {

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

history::History read_query(const HistoryQuery& query) {
  try {
    return history::read_history(query.inputs, history::parse_run_order(query.order), RowFilter::parse(query.where));
  } catch (const FilterError& error) {
    throw history::HistoryInputError(error.what());
  } catch (const ResultsFileError& error) { throw history::HistoryInputError(error.what()); }
}

}  // namespace

std::unique_ptr<JudgedHistory> judge_history(const HistoryQuery& query) {
  if (!std::isfinite(query.min_change_percent) || query.min_change_percent < 0)
    throw history::HistoryInputError(
        fmt::format("--min-change must be a percentage of 0 or more, got {}", query.min_change_percent));
  auto judged = std::make_unique<JudgedHistory>();
  judged->history = read_query(query);
  judged->report.history = &judged->history;
  judged->report.rule.min_change_pct = query.min_change_percent;
  judged->report.points = judged_points(judged->history, judged->report.rule);
  sort_for_reading(judged->report.points);
  return judged;
}

}  // namespace ks
