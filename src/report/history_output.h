#pragma once
// What `kernelsweep history` prints (docs/history.md): the runs, the rule, then one row per step of
// each point (a point without a step gets one row), as aligned text, markdown, CSV or JSON.
#include <string>
#include <vector>

#include "history/history.h"
#include "history/step_detection.h"

namespace ks {

// One point's series and what its steps say.
struct PointHistory {
  const history::PointSeries* series = nullptr;
  history::SeriesSteps steps;
  // Whether the point was measured in the newest run: only then does its latest level speak of now.
  bool in_latest_run = false;
  // Slower since its last step, and measured in the newest run: what --fail-on-step fails on.
  bool slower_now() const { return in_latest_run && steps.slower_now(); }
  // "slower", "faster" (since the last step), "steady" (no step).
  std::string state() const;
};

struct HistoryReport {
  const history::History* history = nullptr;
  history::StepRule rule;
  bool fail_on_step = false;
  std::vector<PointHistory> points;  // in the order sort_for_reading gives them
};

// The points in the order they are printed: slower now (the largest change first), the latest run alone
// slower (pending), faster now, the latest run alone faster, then the steady ones; each group by kernel,
// implementation, mode, parameters and device.
void sort_for_reading(std::vector<PointHistory>& points);

// What every output says first and last: the runs (how many, in what order, the first and the
// latest), the rule in words, and how many points are slower, faster, steady and pending.
std::string history_runs(const HistoryReport& report);
std::string history_method(const history::StepRule& rule);
std::string history_summary(const HistoryReport& report);
// Nanoseconds as milliseconds, 4 significant digits (whole milliseconds from a second up).
std::string history_ms(double ns);

// The output of one --format: table, md, csv or json.
std::string history_text(const HistoryReport& report, const std::string& format);

}  // namespace ks
