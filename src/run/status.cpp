// `kernelsweep status results.h5`: what a finished or interrupted results file holds.
#include <iostream>

#include <fmt/format.h>

#include "run/run.h"
#include "run/sweep_loading.h"
#include "store/summary.h"

namespace ks {

int print_status(const std::string& results_file, bool json, const std::vector<std::string>& plugins,
                 Registry& registry) {
  if (!load_plugins_or_say_why(plugins, registry)) return kExitBadInput;
  const ResultsFile file = ResultsFile::open_read_only(results_file);
  const RunInfo info = file.read_info();
  std::vector<std::string> planned;
  if (auto sweep = plan_text(info.sweep_text, info.sweep_path, registry, false))
    for (const Point& p : sweep->plan.points) planned.push_back(p.id);
  const ResultsSummary s = summarise_results(file, planned);
  if (json) {
    nlohmann::json out = {{"file", results_file}, {"sweep", info.sweep_name}, {"plan_size", info.plan_size},
                          {"started_at", info.started_at}, {"ended_at", info.ended_at}, {"rows", s.rows},
                          {"samples", s.samples}, {"sessions", s.sessions}, {"points_by_status", s.points_by_status},
                          {"missing", s.missing_point_ids}, {"unplanned", s.unplanned_point_ids}};
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << fmt::format("{}: sweep {} ({}), {} points planned\n", results_file, info.sweep_name, info.sweep_path,
                           info.plan_size);
  std::cout << fmt::format("started {}, {}\n", info.started_at,
                           info.ended_at.empty() ? "not finished (running, or interrupted)" : "ended " + info.ended_at);
  std::cout << fmt::format("{} rows, {} samples, {} session(s)\n", s.rows, s.samples, s.sessions);
  for (const auto& [status, count] : s.points_by_status) std::cout << fmt::format("  {:<8} {}\n", status, count);
  std::cout << fmt::format("missing: {} points of the plan have no row", s.missing_point_ids.size());
  std::cout << (s.missing_point_ids.empty() ? "\n" : " (kernelsweep run --resume completes them)\n");
  for (std::size_t i = 0; i < s.missing_point_ids.size() && i < 10; ++i) std::cout << "  " << s.missing_point_ids[i] << "\n";
  return kExitOk;
}

}  // namespace ks
