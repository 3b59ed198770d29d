#include "report/history_timelines.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "report/report_format.h"
#include "view/view.h"

namespace ks::report_page {
namespace {

namespace fs = std::filesystem;
using history::Step;

// Wide enough for a year of nightly runs, a point a few pixels apart.
constexpr int kTimelineWidth = 1000, kTimelineHeight = 380;
// Ticks named besides those of the steps: enough to find a run, few enough to read.
constexpr std::size_t kPlainTicks = 12;

const char* step_colour(const Step& step, bool pending) {
  if (pending) return "#e08a00";
  return step.slowdown() ? "#c0392b" : "#1e8449";
}

std::string timeline_name(const history::SeriesIdentity& identity) {
  std::string name = "timeline-" + slug(identity.kernel) + "-" + identity.point_id.substr(0, 12);
  if (!identity.device.empty()) name += "-" + slug(identity.device);
  return name;
}

std::string timeline_title(const history::PointSeries& series) {
  const auto& identity = series.identity;
  std::string title = fmt::format("{} {} {} {}", identity.kernel, identity.implementation, identity.mode,
                                  parameters_text(series.params));
  if (!identity.device.empty()) title += " · " + identity.device;
  return title;
}

bool has_step(const PointHistory& point) { return !point.steps.steps.empty() || point.steps.pending.has_value(); }

// How run `run` is named under a tick.
std::string tick_text(const history::History& history, const std::string& key, std::size_t run) {
  if (key.empty()) return std::to_string(run);
  const auto& labels = history.runs[run].labels;
  const auto found = labels.find(key);
  return found == labels.end() ? std::to_string(run) : found->second;
}

// Evenly spaced runs, and every run where a step begins.
std::string ticks(const HistoryReport& report, const PointHistory& point, const std::string& key) {
  const std::size_t runs = report.history->runs.size();
  std::map<std::size_t, std::string> at;
  const std::size_t every = std::max<std::size_t>(1, (runs + kPlainTicks - 1) / kPlainTicks);
  for (std::size_t run = 0; run < runs; run += every) at[run] = tick_text(*report.history, key, run);
  for (const Step& step : point.steps.steps) at[step.run] = tick_text(*report.history, key, step.run);
  if (point.steps.pending) at[point.steps.pending->run] = tick_text(*report.history, key, point.steps.pending->run);
  std::vector<std::string> tics;
  for (const auto& [run, text] : at) tics.push_back(fmt::format("{} {}", gnuplot_string(text), run));
  return fmt::format("set xtics ({}) rotate by -40 font ',9'\n", fmt::join(tics, ", "));
}

// A step's mark: a dashed line just before the run where it begins, and its run and change above.
void step_mark(const HistoryReport& report, const Step& step, bool pending, std::string& out) {
  const double x = static_cast<double>(step.run) - 0.5;
  const char* colour = step_colour(step, pending);
  out += fmt::format("set arrow from {0}, graph 0 to {0}, graph 1 nohead dt 2 lw 1.5 lc rgb '{1}'\n", gnuplot_number(x),
                     colour);
  const std::string text = fmt::format("{}{} {:+.1f}%", pending ? "pending: " : "",
                                       report.history->runs[step.run].name(), step.change_pct());
  out += fmt::format("set label {} at {}, graph 0.96 right offset -0.4,0 textcolor rgb '{}'\n", gnuplot_string(text),
                     gnuplot_number(x), colour);
}

// The levels as horizontal segments "x y", a blank line between them: from the first run measured
// to the latest, each level from the run where it begins.
std::string level_segments(const PointHistory& point, const std::vector<double>& medians) {
  const auto& steps = point.steps;
  const std::size_t first = static_cast<std::size_t>(
      std::find_if(medians.begin(), medians.end(), [](double m) { return !std::isnan(m); }) - medians.begin());
  std::vector<std::pair<std::size_t, double>> levels;  // (first run, level ns)
  levels.emplace_back(first, steps.steps.empty() ? steps.level_ns : steps.steps.front().before_ns);
  for (const Step& step : steps.steps) levels.emplace_back(step.run, step.after_ns);
  std::string out;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const double from = static_cast<double>(levels[i].first) - 0.5;
    const double to = static_cast<double>(i + 1 < levels.size() ? levels[i + 1].first : steps.latest_run + 1) - 0.5;
    const std::string level = gnuplot_number(levels[i].second / 1e6);
    out += fmt::format("{} {}\n{} {}\n\n", gnuplot_number(from), level, gnuplot_number(to), level);
  }
  return out;
}

void timeline_script(const Timeline& timeline, std::size_t index, const HistoryReport& report, const std::string& key,
                     std::string& out) {
  const PointHistory& point = *timeline.point;
  const std::vector<double>& medians = point.series->medians_ns;
  begin_plot(timeline.name, timeline.title, out);
  out += fmt::format("set xlabel {}\nset ylabel 'median (ms)'\n",
                     gnuplot_string(key.empty() ? "run (its position in the history)" : "run (" + key + ")"));
  out += "set key outside right top Left reverse\nset grid ytics lc rgb '#dddddd'\n";
  out += fmt::format("set xrange [-0.5:{}]\n", gnuplot_number(static_cast<double>(medians.size()) - 0.5));
  out += ticks(report, point, key);
  for (const Step& step : point.steps.steps) step_mark(report, step, false, out);
  if (point.steps.pending) step_mark(report, *point.steps.pending, true, out);
  out += fmt::format("$median_{} << EOD\n", index);
  for (std::size_t run = 0; run < medians.size(); ++run)
    if (!std::isnan(medians[run]))
      out += fmt::format("{} {}\n", run, gnuplot_number(medians[run] / 1e6));  // gaps left out
  out += fmt::format("EOD\n$level_{} << EOD\n{}EOD\n", index, level_segments(point, medians));
  out += fmt::format(
      "plot $median_{0} using 1:2 with linespoints lw 1 pt 7 ps 0.35 lc rgb '#3d6fd8' title 'median', \\\n"
      "     $level_{0} using 1:2 with lines lw 3 lc rgb '#222222' title 'level'\nset output\n",
      index);
}

}  // namespace

ChosenTimelines choose_timelines(const HistoryReport& report, bool every_point) {
  std::vector<const PointHistory*> chosen;
  for (const PointHistory& point : report.points)
    if (point.steps.runs_seen > 0 && (every_point || has_step(point))) chosen.push_back(&point);
  // By kernel, in the order the kernels first come; within a kernel, in the report's order.
  std::vector<std::string> kernels;
  for (const PointHistory* point : chosen)
    if (std::find(kernels.begin(), kernels.end(), point->series->identity.kernel) == kernels.end())
      kernels.push_back(point->series->identity.kernel);
  const auto kernel_place = [&](const PointHistory* point) {
    return std::find(kernels.begin(), kernels.end(), point->series->identity.kernel) - kernels.begin();
  };
  std::stable_sort(chosen.begin(), chosen.end(),
                   [&](const PointHistory* a, const PointHistory* b) { return kernel_place(a) < kernel_place(b); });
  ChosenTimelines timelines;
  timelines.left_out = chosen.size() > kMaxTimelines ? chosen.size() - kMaxTimelines : 0;
  chosen.resize(std::min(chosen.size(), kMaxTimelines));
  for (const PointHistory* point : chosen)
    timelines.drawn.push_back({point, timeline_name(point->series->identity), timeline_title(*point->series)});
  return timelines;
}

std::string tick_label(const history::History& history) {
  if (history.order.by == history::RunOrder::By::label) return history.order.label;
  const bool every_commit = !history.runs.empty() && std::all_of(history.runs.begin(), history.runs.end(),
                                                                 [](auto& r) { return r.labels.count("commit") > 0; });
  return every_commit ? "commit" : "";
}

DrawnPlots draw_timelines(const std::vector<Timeline>& timelines, const HistoryReport& report,
                          const fs::path& directory) {
  if (timelines.empty()) return {};
  const std::string key = tick_label(*report.history);
  std::string script = gnuplot_header(kTimelineWidth, kTimelineHeight);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < timelines.size(); ++i) {
    timeline_script(timelines[i], i, report, key, script);
    names.push_back(timelines[i].name);
  }
  return draw_with_gnuplot(directory / "plots", script, names);
}

}  // namespace ks::report_page
