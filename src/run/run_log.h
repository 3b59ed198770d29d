#pragma once
// What rank 0 writes to the job's log (a Slurm output file, a terminal): a block at the start that
// says what runs where (the job, the ranks, their GPUs, the output), the progress of long sweeps
// (points done/total, failures, throughput and an ETA, as a live line on a terminal and as plain
// periodic lines in a log), one line for each point that does not pass, as it happens, and at the end
// a summary table per kernel.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cluster/sweep_runner.h"
#include "record/run_record.h"

namespace ks {

// What the start block says of the sweep beside the ranks.
struct RunHeadline {
  std::string sweep_name, sweep_path;
  std::string shard;            // "i/N", or empty for the whole plan
  std::size_t plan_points = 0;  // measurements of the plan (of the shard): points x repetitions
  std::size_t to_measure = 0;   // measurements this run makes (the plan less those passed before)
  std::string results_file, documents_folder, documents_format;
  std::int64_t repetitions = 1;  // the protocol's: each point measured this many times
  bool exclude_slow = false;     // run --exclude-slow: slow ranks measure nothing
};

// The scheduler's word on the job: "slurm job 1234 (array job 1230, task 2), nodes node[01-02]";
// empty outside a Slurm job. `environment` maps variable names to values (SLURM_JOB_ID, ...).
std::string scheduler_line(const std::map<std::string, std::string>& environment);
// The Slurm variables scheduler_line reads, from this process's environment.
std::map<std::string, std::string> scheduler_environment();

// The start block, one fact per line.
std::string start_block(const RunHeadline& headline, const std::vector<RankIdentity>& ranks,
                        const std::string& scheduler);

// The line for a point that did not pass: status, the point, where it ran, the first line of the message.
std::string not_passed_line(const RunRecord& record);

// The progress lines, and the summary table at the end.
class Progress {
 public:
  Progress(std::size_t total, double log_interval_s, std::FILE* out = stderr);
  void add(const RunRecord& record);
  void forget(std::size_t points) { total_ -= std::min(points, total_ - done_); }  // points this run will not measure
  void tick();                                                                     // prints when a line is due
  void note(const std::string& text);  // a line of its own (on a terminal, above the live line)
  void finish();                       // last progress line and the summary table

 private:
  struct KernelTally {
    std::size_t points = 0, passed = 0, failed = 0, skipped = 0;
    double best_median_ns = 0, worst_median_ns = 0;
    double best_sol_pct = -1;  // the highest sol_pct of its points; -1: none has one
  };
  std::string line() const;
  void print_line(bool final_line);

  std::size_t total_;
  std::size_t done_ = 0, failures_ = 0, skipped_ = 0;
  std::map<std::string, KernelTally> kernels_;
  // The flags the summary counts, in the order it prints them (calibration/speed_of_light.h).
  static constexpr const char* kCountedFlags[] = {"implausible", "drift", "no-work", "in-cache"};
  std::map<std::string, std::size_t> flagged_;  // points by flag
  std::FILE* out_;
  bool live_;
  std::chrono::steady_clock::duration interval_;
  std::chrono::steady_clock::time_point start_, last_print_;
};

}  // namespace ks
