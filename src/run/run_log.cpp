#include "run/run_log.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "build_info.h"
#include "calibration/fleet_health.h"
#include "view/view.h"

namespace ks {
namespace {

std::string value_of(const std::map<std::string, std::string>& environment, const std::string& name) {
  const auto it = environment.find(name);
  return it == environment.end() ? std::string() : it->second;
}

// Fleet health: a line for each slow rank (calibration/fleet_health.h).
std::vector<std::string> slow_rank_lines(const std::vector<RankIdentity>& ranks, bool excluded) {
  const std::vector<SlowRank> slow = slow_ranks(calibrations_of(ranks));
  const std::vector<int> aside = ranks_to_set_aside(slow);
  std::vector<std::string> lines;
  for (const SlowRank& rank : slow) {
    const bool set_aside = std::find(aside.begin(), aside.end(), rank.rank) != aside.end();
    lines.push_back(fmt::format("  slow: {}{}", rank.describe(),
                                !excluded   ? ""
                                : set_aside ? " (excluded: it measures nothing)"
                                            : " (kept: every rank of its device is slow in some figure, it least)"));
  }
  return lines;
}

// "0-3" for consecutive ranks, "0,2,5" otherwise.
std::string rank_list(const std::vector<int>& ranks) {
  if (ranks.empty()) return "";
  if (ranks.back() - ranks.front() + 1 == static_cast<int>(ranks.size()))
    return ranks.size() == 1 ? std::to_string(ranks.front()) : fmt::format("{}-{}", ranks.front(), ranks.back());
  return fmt::format("{}", fmt::join(ranks, ","));
}

// "1 CPU core each", "2-16 CPU cores each": the processors each rank (and so its workers) may run on;
// empty when no rank said.
std::string cpus_each(const std::vector<const RankIdentity*>& ranks) {
  std::set<int> counts;
  for (const RankIdentity* r : ranks)
    if (r->host.cpus_allowed > 0) counts.insert(r->host.cpus_allowed);
  if (counts.empty()) return "";
  const int low = *counts.begin(), high = *counts.rbegin();
  return fmt::format("{} CPU core{} each", low == high ? std::to_string(low) : fmt::format("{}-{}", low, high),
                     high == 1 ? "" : "s");
}

// One line per node: its ranks, the CPU cores each may use, and the GPU each has (by name, with its
// index), or why none.
std::vector<std::string> node_lines(const std::vector<RankIdentity>& ranks) {
  std::vector<std::string> hosts;
  std::map<std::string, std::vector<const RankIdentity*>> by_host;
  for (const RankIdentity& r : ranks) {
    if (!by_host.count(r.host.hostname)) hosts.push_back(r.host.hostname);
    by_host[r.host.hostname].push_back(&r);
  }
  std::vector<std::string> lines;
  for (const std::string& host : hosts) {
    std::vector<int> numbers;
    std::vector<std::string> gpus;
    std::set<std::string> problems;
    for (const RankIdentity* r : by_host[host]) {
      numbers.push_back(r->rank);
      if (r->gpu_count > 0) gpus.push_back(fmt::format("{} {}", r->gpu.index, r->gpu.name));
      else problems.insert(r->problem.empty() ? "no GPU: cpu implementations only" : r->problem);
    }
    std::string what = gpus.empty() ? "" : fmt::format("GPUs {}", fmt::join(gpus, ", "));
    for (const std::string& problem : problems) what += (what.empty() ? "" : "; ") + problem;
    const std::string cpus = cpus_each(by_host[host]);
    if (!cpus.empty()) what += "; " + cpus;
    lines.push_back(
        fmt::format("  {}: {} {}, {}", host, numbers.size() == 1 ? "rank" : "ranks", rank_list(numbers), what));
  }
  return lines;
}

}  // namespace

std::map<std::string, std::string> scheduler_environment() {
  std::map<std::string, std::string> out;
  for (const char* name : {"SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT",
                           "SLURM_JOB_NODELIST", "SLURM_RESTART_COUNT", "SLURM_JOB_PARTITION"})
    if (const char* value = std::getenv(name)) out[name] = value;
  return out;
}

std::string scheduler_line(const std::map<std::string, std::string>& environment) {
  const std::string job = value_of(environment, "SLURM_JOB_ID");
  if (job.empty()) return "";
  std::string line = "slurm job " + job;
  const std::string array = value_of(environment, "SLURM_ARRAY_JOB_ID");
  const std::string task = value_of(environment, "SLURM_ARRAY_TASK_ID");
  if (!array.empty() && !task.empty()) {
    const std::string count = value_of(environment, "SLURM_ARRAY_TASK_COUNT");
    line += fmt::format(" (array job {}, task {}{})", array, task, count.empty() ? "" : " of " + count);
  }
  const std::string restarts = value_of(environment, "SLURM_RESTART_COUNT");
  if (!restarts.empty() && restarts != "0") line += fmt::format(", requeued {} time(s)", restarts);
  const std::string partition = value_of(environment, "SLURM_JOB_PARTITION");
  if (!partition.empty()) line += ", partition " + partition;
  const std::string nodes = value_of(environment, "SLURM_JOB_NODELIST");
  if (!nodes.empty()) line += ", nodes " + nodes;
  return line;
}

std::string start_block(const RunHeadline& h, const std::vector<RankIdentity>& ranks, const std::string& scheduler) {
  std::string block = fmt::format("kernelsweep {} (git {}): sweep {} ({})\n", build::version, build::git_commit,
                                  h.sweep_name, h.sweep_path);
  if (!scheduler.empty()) block += "  job: " + scheduler + "\n";
  const std::string repeated =
      h.repetitions > 1 ? fmt::format(" ({} points x {} repetitions)", h.plan_points / h.repetitions, h.repetitions)
                        : "";
  block += fmt::format("  plan: {} points{}{}, {} to measure\n", h.plan_points, repeated,
                       h.shard.empty() ? "" : fmt::format(" (shard {})", h.shard), h.to_measure);
  const std::vector<std::string> nodes = node_lines(ranks);
  block += fmt::format("  ranks: {} on {} node(s)\n", ranks.size(), nodes.size());
  for (const std::string& line : nodes) block += line + "\n";
  if (std::any_of(ranks.begin(), ranks.end(),
                  [](const RankIdentity& r) { return r.gpu_count > 0 && r.host.cpus_allowed == 1; }))
    block +=
        "  note: a GPU rank may use one CPU core, which its worker and the worker's threads share (mpirun binds\n"
        "        each rank to a core when it starts two or fewer); work the host sets the pace of, such as Python\n"
        "        implementations, is timed on it. mpirun --bind-to none, or --map-by slot:PE=N, gives each rank\n"
        "        more (docs/measurement.md)\n";
  for (const std::string& line : slow_rank_lines(ranks, h.exclude_slow)) block += line + "\n";
  block += fmt::format("  output: {}, documents in {} ({})\n", h.results_file, h.documents_folder, h.documents_format);
  return block;
}

std::string not_passed_line(const RunRecord& r) {
  const std::string message = r.message.substr(0, r.message.find('\n'));
  const std::string where = r.host.empty() ? "" : fmt::format(" on rank {} ({})", r.rank, r.host);
  return fmt::format("{}: {}/{}/{} {}{}: {}", r.status, r.kernel, r.implementation, r.mode,
                     parameters_text(nlohmann::json::parse(r.params_json)), where, message);
}

}  // namespace ks
