#include "run/run_log.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "build_info.h"
#include "calibration/fleet_health.h"
#include "calibration/speed_of_light.h"
#include "common/clock.h"
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

constexpr auto kLiveInterval = std::chrono::milliseconds(250);

std::string format_ns(double ns) {
  if (ns <= 0) return "-";
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.2f} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.3f} ms", ns / 1e6);
  return fmt::format("{:.3f} s", ns / 1e9);
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

Progress::Progress(std::size_t total, double log_interval_s, std::FILE* out)
    : total_(total),
      out_(out),
      live_(::isatty(::fileno(out)) == 1),
      interval_(live_ ? std::chrono::duration_cast<std::chrono::steady_clock::duration>(kLiveInterval)
                      : std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(log_interval_s))),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

void Progress::add(const RunRecord& r) {
  ++done_;
  for (const char* flag : kCountedFlags)
    if (has_flag(r.flags, flag)) ++flagged_[flag];
  KernelTally& k = kernels_[r.kernel];
  ++k.points;
  if (r.status == "passed") {
    ++k.passed;
    const double m = r.stats.median_ns;
    k.best_median_ns = k.best_median_ns == 0 ? m : std::min(k.best_median_ns, m);
    k.worst_median_ns = std::max(k.worst_median_ns, m);
    if (r.sol_pct >= 0 && !has_flag(r.flags, "implausible")) k.best_sol_pct = std::max(k.best_sol_pct, r.sol_pct);
  } else if (r.status == "skipped") {
    ++k.skipped;
    ++skipped_;
  } else {
    ++k.failed;
    ++failures_;
  }
}

std::string Progress::line() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? done_ / elapsed : 0;
  const double eta = rate > 0 ? (total_ - done_) / rate : -1;
  const double percent = total_ ? 100.0 * done_ / total_ : 100.0;
  return fmt::format("[{}/{}] {:5.1f}%  failed {}  skipped {}  {:.2f} points/s  elapsed {}  ETA {}", done_, total_,
                     percent, failures_, skipped_, rate, human_duration(elapsed),
                     done_ == total_ ? "0s" : human_duration(eta));
}

void Progress::print_line(bool final_line) {
  if (live_) fmt::print(out_, "\r\033[K{}{}", line(), final_line ? "\n" : "");
  else fmt::print(out_, "progress {}\n", line());
  std::fflush(out_);
  last_print_ = std::chrono::steady_clock::now();
}

void Progress::note(const std::string& text) {
  fmt::print(out_, "{}{}\n", live_ ? "\r\033[K" : "", text);
  std::fflush(out_);
}

void Progress::tick() {
  if (std::chrono::steady_clock::now() - last_print_ >= interval_) print_line(false);
}

void Progress::finish() {
  print_line(true);
  fmt::print(out_, "\n{:<22} {:>7} {:>7} {:>7} {:>8} {:>14} {:>14} {:>9}\n", "kernel", "points", "passed", "failed",
             "skipped", "best median", "worst median", "best sol%");
  for (const auto& [name, k] : kernels_)
    fmt::print(out_, "{:<22} {:>7} {:>7} {:>7} {:>8} {:>14} {:>14} {:>9}\n", name, k.points, k.passed, k.failed,
               k.skipped, format_ns(k.best_median_ns), format_ns(k.worst_median_ns),
               k.best_sol_pct < 0 ? "-" : fmt::format("{:.1f}", k.best_sol_pct));
  if (!flagged_.empty()) {
    // A flagged figure must not pass unnoticed: implausible first (beyond the device: kept, shown, and
    // left out of every ratio), then the others (docs/speed-of-light.md).
    std::string counts;
    for (const char* flag : kCountedFlags)
      if (const auto it = flagged_.find(flag); it != flagged_.end())
        counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", it->second, flag);
    fmt::print(out_,
               "flagged: {} (kernelsweep show RESULTS --columns kernel,implementation,mode,sol_pct,flags; "
               "docs/speed-of-light.md)\n",
               counts);
  }
  std::fflush(out_);
}

}  // namespace ks
