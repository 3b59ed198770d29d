#pragma once
// What one timed point yields: the resolved protocol it was timed with, every raw sample, and the
// aggregates. Raw repetitions are kept apart from the aggregates (as Google Benchmark does).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/sweep_spec.h"

namespace ks {

using Json = nlohmann::json;

// A ProtocolSpec with every default resolved for one backend: the BenchmarkProtocol's content.
struct Protocol {
  std::string name = "do_bench";
  std::string timer;             // "cuda_events" or "steady_clock"
  double warmup_ms = 25;
  double rep_ms = 100;
  std::int64_t min_repeat = 1;  // timed repetitions at least (capped by max_repeat)
  std::int64_t max_repeat = 10000;
  std::int64_t flush_bytes = 0;  // zeroed before each estimate call and each timed call
  std::vector<double> quantiles{0.5, 0.2, 0.8};  // reported for every timed point, in this order
  std::string quantile_method = "linear";  // numpy/torch "linear" interpolation
  std::string primary_statistic = "median";
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

struct Timing {
  std::int64_t n_warmup = 0;
  std::int64_t n_repeat = 0;
  double estimate_ms = 0;          // one call's estimated time (flush included, as in Triton)
  std::vector<double> samples_ns;  // every timed repetition, in order
};

}  // namespace ks
