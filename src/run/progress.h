#pragma once
// Rank 0's progress report for long sweeps: points done/total, failures, throughput and an ETA, as a
// live line on a terminal and as plain periodic lines in a log (a Slurm output file); at the end, a
// summary table per kernel.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "record/run_record.h"

namespace ks {

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
