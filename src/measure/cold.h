#pragma once
// The cold protocol, after NVBench's cold measurement. Each sample:
//   1. flush (zero flush_bytes: the device's L2 by default on a GPU, the last-level cache on the CPU);
//   2. hold the stream (a kernel spinning on a host flag), so that the call's launches are all queued
//      before the first runs: launch overhead stays out of the sample;
//   3. read the SM clock, start mark, call, end mark, read the SM clock, release, synchronise.
// A sample whose SM clock ran under throttle_threshold of the device's peak clock is dropped and
// counted, and the next is taken throttle_pause_s later. Sampling stops once at least min_samples
// samples and min_time_s of measured time are kept and their relative standard deviation is at most
// max_noise (the goal met), or at timeout_s of wall time (not met). One call before the first sample
// keeps lazy initialisation out.
#include <cstdint>

#include "measure/protocol.h"

namespace ks {

// The samples kept so far, as the stopping rule sees them (Welford's running mean and variance).
class NoiseTracker {
 public:
  void add(double sample_ns);
  std::int64_t count() const { return count_; }
  double total_s() const { return total_ns_ / 1e9; }
  // The sample standard deviation over the mean; NaN under two samples.
  double relative_stddev() const;

 private:
  std::int64_t count_ = 0;
  double mean_ = 0, squares_ = 0, total_ns_ = 0;
};

enum class ColdVerdict { go_on, goal_met, timed_out };

// The stopping rule, given the samples kept and the wall time since the first sample.
ColdVerdict cold_verdict(const Protocol& protocol, const NoiseTracker& kept, double elapsed_s);

// Times mode.run() under the cold protocol. Throws std::runtime_error when every sample until the
// timeout was dropped, what the kernel throws, and what the timer throws.
Timing cold(const BoundMode& mode, BenchTimer& timer, const Protocol& protocol, const TimedPhase& phase = {});

}  // namespace ks
