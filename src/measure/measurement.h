#pragma once
// What one timed point yields: the resolved protocol it was timed with, every raw sample, and the
// aggregates. Raw repetitions are kept apart from the aggregates (as Google Benchmark does).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/sweep_spec.h"

namespace ks {

using Json = nlohmann::json;

// A ProtocolSpec with every default resolved for one backend: the BenchmarkProtocol's content. Which
// fields a protocol uses, and so which its document holds, is protocol_to_json's (protocol.cpp).
struct Protocol {
  std::string name = "do_bench";  // do_bench, cold or graph
  std::string timer;              // "cuda_events" or "steady_clock"
  double warmup_ms = 25;
  double rep_ms = 100;
  std::int64_t min_repeat = 1;  // timed repetitions at least (capped by max_repeat)
  std::int64_t max_repeat = 10000;
  std::int64_t flush_bytes = 0;                  // zeroed before each estimate call and each timed call
  std::vector<double> quantiles{0.5, 0.2, 0.8};  // reported for every timed point, in this order
  std::string quantile_method = "linear";        // numpy/torch "linear" interpolation
  std::string primary_statistic = "median";
  std::int64_t repetitions = 1;  // measurements of each point, interleaved across the plan
  ColdRule cold;                 // the cold protocol's stopping rule and throttle handling
  // graph: how many times the captured calls are replayed and timed (Triton's n_retries).
  std::int64_t replays = 10;
  // do_bench and graph: the SM clock read over each sample (on a GPU only; cold always reads it).
  bool sm_clock_per_sample = false;
  // On a GPU: a point whose timed repetitions spanned less than ten seconds (or flushed between its
  // calls) runs an energy window of its own after them (measure/energy.h). Never on the CPU, which
  // has no energy counter.
  bool energy = false;
};

// Aggregates of one point's samples (see summarize): stddev_ns is the sample standard deviation
// (divisor n - 1, torch.std's default), not the population one.
struct Statistics {
  double median_ns = 0, p20_ns = 0, p80_ns = 0;
  double mean_ns = 0, min_ns = 0, max_ns = 0, stddev_ns = 0;
};

// One of the quantiles a protocol asks for, and its value over a point's samples.
struct Quantile {
  double quantile = 0;
  double value_ns = 0;
};

// How a cold measurement ended: whether the noise goal was met, how noisy its samples were, and how
// many it dropped because the GPU was slowed. Left as is by the other protocols.
struct NoiseRecord {
  double noise = std::numeric_limits<double>::quiet_NaN();  // relative standard deviation of the samples kept
  std::int32_t goal_met = -1;                               // 1 met, 0 stopped by the timeout, -1 not a cold point
  std::int64_t samples_dropped = 0;                         // taken while the SM clock was under the threshold
};

struct Timing {
  std::int64_t n_warmup = 0;
  std::int64_t n_repeat = 0;       // timed calls per sample (graph without a flush) or samples
  double estimate_ms = 0;          // one call's estimated time (flush included, as in Triton)
  std::vector<double> samples_ns;  // every sample (one call's time), in order
  // The calls run between the timed phase's `before` and `after` (protocol.h's TimedPhase): what its
  // energy is divided by.
  std::int64_t timed_calls = 0;
  // The SM clock over each sample where it was read (cold, on a GPU), else empty.
  std::vector<double> sample_sm_clock_mhz;
  NoiseRecord noise;
};

}  // namespace ks
