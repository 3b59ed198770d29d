// `kernelsweep status results.h5`: what a finished or interrupted results file holds.
#include <algorithm>
#include <iostream>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "calibration/fleet_health.h"
#include "common/printable.h"
#include "run/run.h"
#include "run/sweep_loading.h"
#include "store/summary.h"
#include "view/view.h"

namespace ks {
namespace {

// How many points that did not pass the text lists (--json lists them all), and how wide a message.
constexpr std::size_t kNotPassedListed = 20;
constexpr std::size_t kMessageWidth = 100;

// The points whose latest row is failed, error, crashed or timeout, in the order they first appear:
// those rows alone are read whole.
std::vector<ViewRow> points_not_passed(const ResultsFile& file, const std::vector<PointStatus>& points,
                                       const std::string& label) {
  std::vector<const PointStatus*> listed;
  for (const PointStatus& point : points)
    if (did_not_pass(point.status)) listed.push_back(&point);
  std::ranges::sort(listed, {}, &PointStatus::first_row);
  std::vector<ViewRow> rows;
  for (const PointStatus* point : listed) {
    ViewRow& row = rows.emplace_back();
    row.run = std::move(file.read_runs(point->latest_row, 1).front());
    row.params = nlohmann::json::parse(row.run.params_json);
    row.file = label;
    row.row = point->latest_row;
  }
  return rows;
}

nlohmann::json not_passed_json(const std::vector<ViewRow>& rows) {
  nlohmann::json list = nlohmann::json::array();
  for (const ViewRow& row : rows)
    list.push_back({{"point_id", row.run.point_id},
                    {"kernel", row.run.kernel},
                    {"implementation", row.run.implementation},
                    {"mode", row.run.mode},
                    {"params", row.params},
                    {"status", row.run.status},
                    {"message", first_line_cut(row.run.message, kMessageWidth)}});
  return list;
}

void print_not_passed(const std::vector<ViewRow>& rows, const std::string& results_file) {
  std::cout << fmt::format("not passed: {} points (failed, error, crashed or timeout)\n", rows.size());
  for (std::size_t i = 0; i < rows.size() && i < kNotPassedListed; ++i) {
    const RunRecord& run = rows[i].run;
    std::cout << fmt::format("  {:<8} {}/{}/{} {}: {}\n", run.status, run.kernel, run.implementation, run.mode,
                             parameters_text(rows[i].params), first_line_cut(run.message, kMessageWidth));
  }
  if (rows.size() > kNotPassedListed)
    std::cout << fmt::format("  ... and {} more: kernelsweep show {} --where 'status!=passed|skipped'\n",
                             rows.size() - kNotPassedListed, results_file);
}

}  // namespace

int print_status(const std::string& results_file, bool json, const std::vector<std::string>& plugins,
                 Registry& registry) {
  if (!load_plugins_or_say_why(plugins, registry)) return kExitBadInput;
  const ResultsFile file = ResultsFile::open_read_only(results_file);
  const RunInfo info = file.read_info();
  const PlanRequest stored = stored_sweep_request(info);
  // The plan is made again from the sweep file's text stored in the file. Where it cannot be made
  // here (a kernel of a plugin not loaded), which points are missing is not known, and status says
  // so rather than count none; the reason goes to stderr.
  // A file imported from another tool's results has no sweep file: its points are its plan.
  const bool imported = info.sweep_text.empty();
  // A shard's file is judged against its shard, a merged or unsharded file against the whole plan, a
  // file made with --where against the points it selected. The plan is made on a thread of its own
  // while this one reads the statuses: one is all reckoning, the other all reading (and only this
  // thread touches HDF5).
  std::optional<PositionedKeys> plan;
  std::jthread planner;
  if (!imported)
    planner = std::jthread([&] {
      const auto sweep = load_sweep(stored, registry);
      if (sweep) plan = sweep->point_keys();
      if (plan) sort_by_key(*plan);
    });
  const std::vector<PointStatus> points = file.point_statuses();
  if (planner.joinable()) planner.join();
  const bool plan_known = imported || plan.has_value();
  if (imported) {
    plan.emplace();
    for (const PointStatus& point : points) plan->emplace_back(point.key, plan->size());
  }
  const ResultsSummary s = summarise_results(file, points, plan.value_or(PositionedKeys()));
  const std::vector<ViewRow> not_passed = points_not_passed(file, points, results_file);
  // Fleet health: the slow ranks (calibration/fleet_health.h).
  const std::vector<SlowRank> slow = slow_ranks(rank_calibrations(file.read_ranks()));
  if (json) {
    nlohmann::json slow_json = nlohmann::json::array();
    for (const SlowRank& rank : slow) slow_json.push_back(to_json(rank));
    nlohmann::json out = {{"file", results_file},
                          {"sweep", info.sweep_name},
                          {"plan_size", info.plan_size},
                          {"shard", stored.shard.empty() ? nlohmann::json(nullptr) : nlohmann::json(stored.shard)},
                          {"where", info.where.empty() ? nlohmann::json(nullptr) : nlohmann::json(info.where)},
                          {"started_at", info.started_at},
                          {"ended_at", info.ended_at},
                          {"rows", s.rows},
                          {"samples", s.samples},
                          {"sessions", s.sessions},
                          {"points_by_status", s.points_by_status},
                          {"missing", plan_known ? nlohmann::json(s.missing_point_ids) : nlohmann::json(nullptr)},
                          {"unplanned", plan_known ? nlohmann::json(s.unplanned_point_ids) : nlohmann::json(nullptr)},
                          {"not_passed", not_passed_json(not_passed)},
                          {"slow_ranks", slow_json}};
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << fmt::format("{}: sweep {} ({}), {} points planned{}{}\n", results_file, info.sweep_name, info.sweep_path,
                           info.plan_size, stored.shard.empty() ? "" : " in shard " + stored.shard,
                           info.where.empty() ? "" : fmt::format(" where '{}'", info.where));
  std::cout << fmt::format("started {}, {}\n", info.started_at,
                           info.ended_at.empty() ? "not finished (running, or interrupted)" : "ended " + info.ended_at);
  std::cout << fmt::format("{} rows, {} samples, {} session(s)\n", s.rows, s.samples, s.sessions);
  for (const auto& [status, count] : s.points_by_status) std::cout << fmt::format("  {:<8} {}\n", status, count);
  if (!plan_known) {
    std::cout << "missing: not known: the sweep file stored in the results file does not plan here (see above; "
                 "--plugin loads the plugins it needs)\n";
  } else {
    std::cout << fmt::format("missing: {} points of the plan have no row", s.missing_point_ids.size());
    std::string resume = "kernelsweep run --resume";
    if (!stored.shard.empty()) resume += " --shard " + stored.shard;
    if (!info.where.empty()) resume += fmt::format(" --where '{}'", info.where);
    std::cout << (s.missing_point_ids.empty() ? "\n" : fmt::format(" ({} completes them)\n", resume));
    for (std::size_t i = 0; i < s.missing_point_ids.size() && i < 10; ++i)
      std::cout << "  " << s.missing_point_ids[i] << "\n";
    if (!s.unplanned_point_ids.empty()) {
      std::cout << fmt::format(
          "not in the plan: {} points have rows but are not points of the stored sweep file (a "
          "damaged file, or rows of another sweep)\n",
          s.unplanned_point_ids.size());
      for (std::size_t i = 0; i < s.unplanned_point_ids.size() && i < 10; ++i)
        std::cout << "  " << s.unplanned_point_ids[i] << "\n";
    }
  }
  print_not_passed(not_passed, results_file);
  for (const SlowRank& rank : slow)
    std::cout << fmt::format("slow: {} ({} the median of the ranks with the same device)\n", rank.describe(),
                             slow_rule());
  return kExitOk;
}

}  // namespace ks
