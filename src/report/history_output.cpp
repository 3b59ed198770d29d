#include "report/history_output.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/report_format.h"
#include "report/text_table.h"
#include "view/view.h"

namespace ks {
namespace {

using Json = nlohmann::json;
using history::Step;

// The order groups are printed in (sort_for_reading).
int reading_group(const PointHistory& point) {
  const auto& steps = point.steps;
  if (steps.slower_now()) return 0;
  if (steps.pending && steps.pending->slowdown()) return 1;
  if (steps.faster_now()) return 2;
  if (steps.pending) return 3;
  return 4;
}

std::string change_percent_text(const Step& step) { return fmt::format("{:+.1f}%", step.change_pct()); }

std::string direction(const Step& step) { return step.slowdown() ? "slowdown" : "speed-up"; }

const history::HistoryRun& run_at(const HistoryReport& report, std::size_t run) { return report.history->runs[run]; }

}  // namespace

std::string history_ms(double ns) {
  const double ms = ns / 1e6;
  return ms >= 1000 ? fmt::format("{:.0f}", ms) : fmt::format("{:.4g}", ms);
}

std::string history_runs(const HistoryReport& report) {
  const auto& runs = report.history->runs;
  const auto name = [&](std::size_t i) { return fmt::format("run {} {} ({})", i, runs[i].file, runs[i].name()); };
  std::string text =
      fmt::format("{} run{} in {} order", runs.size(), runs.size() == 1 ? "" : "s", report.history->order.text());
  if (runs.empty()) return text;
  return text + (runs.size() == 1 ? ": " + name(0) : fmt::format(", from {} to {}", name(0), name(runs.size() - 1)));
}

std::string history_method(const history::StepRule& rule) {
  return fmt::format(
      "each point's medians split where their level shifts and stays (least absolute deviations, every level held by "
      "{} runs or more); a step is a change of level of more than {:g}% and beyond the noise of the point's own runs "
      "(a {:g}% false-alarm rate over a series of noise) (docs/history.md)",
      rule.min_runs, rule.min_change_pct, rule.false_alarm_rate * 100);
}

std::string history_summary(const HistoryReport& report) {
  std::size_t slower = 0, faster = 0, steady = 0, pending = 0;
  for (const PointHistory& point : report.points) {
    const std::string state = point.state();
    slower += state == "slower";
    faster += state == "faster";
    steady += state == "steady";
    pending += point.steps.pending.has_value();
  }
  return fmt::format(
      "{} points over {} runs: {} slower since a step, {} faster since a step, {} without a step; {} with the latest "
      "run alone off its level (pending)",
      report.points.size(), report.history->runs.size(), slower, faster, steady, pending);
}

namespace {

// --- rows ---------------------------------------------------------------------------------------

const std::vector<std::string> kHistoryHeadings{"kernel",    "implementation", "mode",  "device", "params", "runs",
                                                "first ms",  "latest ms",      "noise", "step",   "at",     "run",
                                                "before ms", "after ms",       "change"};
const std::vector<bool> kHistoryRightAligned{false, false, false, false, false, true, true, true,
                                             true,  false, true,  false, true,  true, true};

std::vector<std::string> cells_of_step(const HistoryReport& report, const Step& step, const std::string& kind) {
  return {kind,
          std::to_string(step.run),
          run_at(report, step.run).name(),
          history_ms(step.before_ns),
          history_ms(step.after_ns),
          change_percent_text(step)};
}

// One row per step of the point, then one for a pending latest run; one row for a point with neither.
std::vector<std::vector<std::string>> rows_of_point(const HistoryReport& report, const PointHistory& point) {
  const history::PointSeries& series = *point.series;
  const history::SeriesSteps& steps = point.steps;
  const std::vector<std::string> shared{
      series.identity.kernel,
      series.identity.implementation,
      series.identity.mode,
      series.identity.device,
      parameters_text(series.params),
      std::to_string(steps.runs_seen),
      steps.runs_seen ? history_ms(steps.first_ns) : "",
      steps.runs_seen ? history_ms(steps.latest_ns) : "",
      steps.runs_seen ? fmt::format("{:.1f}%", steps.noise_ns / steps.level_ns * 100) : ""};
  std::vector<std::vector<std::string>> rows;
  const auto add = [&](std::vector<std::string> cells) {
    std::vector<std::string> row = shared;
    row.insert(row.end(), cells.begin(), cells.end());
    rows.push_back(std::move(row));
  };
  for (const Step& step : steps.steps) add(cells_of_step(report, step, direction(step)));
  if (steps.pending) add(cells_of_step(report, *steps.pending, "pending"));
  if (rows.empty()) add({"none", "", "", "", "", ""});
  return rows;
}

std::vector<std::vector<std::string>> history_rows(const HistoryReport& report) {
  std::vector<std::vector<std::string>> rows;
  for (const PointHistory& point : report.points)
    for (auto& row : rows_of_point(report, point)) rows.push_back(std::move(row));
  return rows;
}

std::string history_table(const HistoryReport& report) {
  std::vector<std::vector<std::string>> rows{kHistoryHeadings};
  for (auto& row : history_rows(report)) rows.push_back(std::move(row));
  return fmt::format("history: {}\nmethod: {}\n\n{}\n{}\n", history_runs(report), history_method(report.rule),
                     aligned_text_table(rows, kHistoryRightAligned), history_summary(report));
}

std::string history_markdown(const HistoryReport& report) {
  return fmt::format("# kernelsweep history\n\n- runs: {}\n- method: {}\n\n{}\n{}\n",
                     report_page::pipes_escaped(history_runs(report)), history_method(report.rule),
                     markdown_table(kHistoryHeadings, history_rows(report), kHistoryRightAligned),
                     history_summary(report));
}

std::string history_csv(const HistoryReport& report) {
  std::vector<std::string> header = kHistoryHeadings;
  header.push_back("point_id");
  std::string text = csv_line(header);
  for (const PointHistory& point : report.points) {
    for (auto& row : rows_of_point(report, point)) {
      row.push_back(point.series->identity.point_id);
      text += csv_line(row);
    }
  }
  return text;
}

// --- JSON ---------------------------------------------------------------------------------------

Json labels_object(const RunLabels& labels) {
  Json object = Json::object();
  for (const auto& [key, value] : labels) object[key] = value;
  return object;
}

Json step_json(const HistoryReport& report, const Step& step) {
  const history::HistoryRun& run = run_at(report, step.run);
  return {{"run", step.run},
          {"file", run.file},
          {"time", run.time},
          {"labels", labels_object(run.labels)},
          {"before_ms", step.before_ns / 1e6},
          {"after_ms", step.after_ns / 1e6},
          {"change_pct", step.change_pct()},
          {"direction", direction(step)},
          {"runs_after", step.runs_after}};
}

Json known_or_null(bool known, double value) { return known ? Json(value) : Json(nullptr); }

Json series_json(const HistoryReport& report, const PointHistory& point) {
  const history::PointSeries& series = *point.series;
  const history::SeriesSteps& steps = point.steps;
  const bool seen = steps.runs_seen > 0;
  Json step_list = Json::array();
  for (const Step& step : steps.steps) step_list.push_back(step_json(report, step));
  return {{"kernel", series.identity.kernel},
          {"implementation", series.identity.implementation},
          {"mode", series.identity.mode},
          {"parameters", series.params},
          {"device", series.identity.device},
          {"point_id", series.identity.point_id},
          {"runs_seen", steps.runs_seen},
          {"first_ms", known_or_null(seen, steps.first_ns / 1e6)},
          {"latest_ms", known_or_null(seen, steps.latest_ns / 1e6)},
          {"latest_run", seen ? Json(steps.latest_run) : Json(nullptr)},
          {"level_ms", known_or_null(seen, steps.level_ns / 1e6)},
          {"noise_ms", known_or_null(seen, steps.noise_ns / 1e6)},
          {"state", point.state()},
          {"steps", step_list},
          {"pending", steps.pending ? step_json(report, *steps.pending) : Json(nullptr)}};
}

std::string history_json(const HistoryReport& report) {
  Json runs = Json::array();
  for (std::size_t i = 0; i < report.history->runs.size(); ++i) {
    const history::HistoryRun& run = report.history->runs[i];
    runs.push_back({{"run", i}, {"file", run.file}, {"time", run.time}, {"labels", labels_object(run.labels)}});
  }
  Json summary = {{"points", report.points.size()}, {"slower", 0}, {"faster", 0}, {"steady", 0}, {"pending", 0}};
  Json series = Json::array();
  for (const PointHistory& point : report.points) {
    summary[point.state()] = summary[point.state()].get<std::size_t>() + 1;
    if (point.steps.pending) summary["pending"] = summary["pending"].get<std::size_t>() + 1;
    series.push_back(series_json(report, point));
  }
  const history::StepRule& rule = report.rule;
  const Json out = {{"order", report.history->order.text()},
                    {"runs", runs},
                    {"method",
                     {{"min_change_pct", rule.min_change_pct},
                      {"min_runs", rule.min_runs},
                      {"false_alarm_rate", rule.false_alarm_rate},
                      {"penalty_sigmas", rule.penalty_sigmas},
                      {"noise_floor", rule.noise_floor},
                      {"text", history_method(rule)}}},
                    {"fail_on_step", report.fail_on_step},
                    {"summary", summary},
                    {"series", series}};
  return out.dump(2) + "\n";
}

}  // namespace

std::string PointHistory::state() const {
  if (steps.slower_now()) return "slower";
  if (steps.faster_now()) return "faster";
  return "steady";
}

void sort_for_reading(std::vector<PointHistory>& points) {
  const auto last_change = [](const PointHistory& point) {
    if (!point.steps.steps.empty()) return point.steps.steps.back().change_pct();
    return point.steps.pending ? point.steps.pending->change_pct() : 0.0;
  };
  std::stable_sort(points.begin(), points.end(), [&](const PointHistory& a, const PointHistory& b) {
    if (reading_group(a) != reading_group(b)) return reading_group(a) < reading_group(b);
    if (last_change(a) != last_change(b)) return std::abs(last_change(a)) > std::abs(last_change(b));
    const history::SeriesIdentity &x = a.series->identity, &y = b.series->identity;
    return std::tie(x.kernel, x.implementation, x.mode, x.params_json, x.device) <
           std::tie(y.kernel, y.implementation, y.mode, y.params_json, y.device);
  });
}

std::string history_text(const HistoryReport& report, const std::string& format) {
  if (format == "json") return history_json(report);
  if (format == "csv") return history_csv(report);
  if (format == "md") return history_markdown(report);
  return history_table(report);
}

}  // namespace ks
