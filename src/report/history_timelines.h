#pragma once
// The timelines of `report --history` (docs/report.md, "A history"): one plot per point, its median
// in each run against the run's position in the history's order (the ticks name runs by a label),
// the levels between its steps drawn as horizontal segments, and each step marked where it begins
// and labelled with its run and change. Drawn by gnuplot into DIR/plots/, as the report's other plots.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "report/gnuplot.h"
#include "report/history_output.h"

namespace ks::report_page {

struct Timeline {
  const PointHistory* point = nullptr;
  std::string name;   // DIR/plots/NAME.svg
  std::string title;  // the point: kernel, implementation, mode, parameters, device
};

// A page of a year of nightly runs stays readable and quick to draw: beyond this many, the points
// chosen are counted and named on the page, not drawn.
inline constexpr std::size_t kMaxTimelines = 200;

struct ChosenTimelines {
  std::vector<Timeline> drawn;  // by kernel (in the order the kernels first come), then in the report's order
  std::size_t left_out = 0;     // chosen, beyond kMaxTimelines
};

// The points with a step or a pending latest run; with `every_point`, every point measured at all.
ChosenTimelines choose_timelines(const HistoryReport& report, bool every_point);

// The label the ticks name the runs by: KEY of --order label:KEY, else `commit` where every run has
// one; "" where none does (the ticks are the runs' positions).
std::string tick_label(const history::History& history);

// Writes DIR/plots/plots.gp with every timeline and runs gnuplot on it.
DrawnPlots draw_timelines(const std::vector<Timeline>& timelines, const HistoryReport& report,
                          const std::filesystem::path& directory);

}  // namespace ks::report_page
