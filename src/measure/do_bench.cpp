#include "measure/do_bench.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "measure/timer.h"

namespace ks {
namespace {

constexpr std::int64_t kGpuFlushBytes = 256LL << 20;  // Triton's 256 MB L2 flush buffer
constexpr int kEstimateCalls = 5;
constexpr std::int64_t kCpuMinRepeat = 10;

std::unique_ptr<BenchTimer> make_timer(void* stream, const Protocol& protocol) {
  if (protocol.timer == "steady_clock") return make_steady_clock_timer(protocol.flush_bytes);
  if (protocol.timer == "cuda_events") {
#ifdef KERNELSWEEP_HAVE_CUDA
    return make_cuda_event_timer(stream, protocol.flush_bytes);
#else
    (void)stream;
    throw std::runtime_error(
        "do_bench: timer 'cuda_events' needs CUDA, and this kernelsweep was built without it "
        "(configure with -DKERNELSWEEP_CUDA=ON)");
#endif
  }
  throw std::invalid_argument(fmt::format("do_bench: unknown timer '{}' (steady_clock or cuda_events)", protocol.timer));
}

// floor(budget / estimate), at least 1, computed in double so that a huge ratio cannot overflow.
std::int64_t calls_within(double budget_ms, double estimate_ms, std::int64_t cap) {
  const double calls = std::floor(budget_ms / estimate_ms);
  if (!(calls < static_cast<double>(cap))) return std::max<std::int64_t>(1, cap);
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(calls));
}

// Step 2: five calls, each after a flush, timed together; the flush is part of the estimate, as in
// Triton's do_bench.
double estimate_call_ms(const BoundMode& mode, BenchTimer& timer) {
  timer.reserve_marks(2);
  timer.record(0);
  for (int i = 0; i < kEstimateCalls; ++i) {
    timer.flush();
    mode.run();
  }
  timer.record(1);
  timer.synchronize();
  return timer.elapsed_ns(0, 1) / 1e6 / kEstimateCalls;
}

// Step 5: each repetition flushes, then is timed alone between its own two marks.
std::vector<double> timed_repetitions(const BoundMode& mode, BenchTimer& timer, std::int64_t n_repeat) {
  const auto count = static_cast<std::size_t>(n_repeat);
  timer.reserve_marks(2 * count);
  for (std::size_t i = 0; i < count; ++i) {
    timer.flush();
    timer.record(2 * i);
    mode.run();
    timer.record(2 * i + 1);
  }
  timer.synchronize();
  std::vector<double> samples_ns(count);
  for (std::size_t i = 0; i < count; ++i) samples_ns[i] = timer.elapsed_ns(2 * i, 2 * i + 1);
  return samples_ns;
}

}  // namespace

Protocol resolve_protocol(const ProtocolSpec& spec, Backend backend) {
  if (spec.name != "do_bench")
    throw std::invalid_argument(fmt::format("protocol '{}' is not known (only do_bench)", spec.name));
  Protocol protocol;
  protocol.name = spec.name;
  protocol.timer = backend == Backend::cuda ? "cuda_events" : "steady_clock";
  protocol.warmup_ms = spec.warmup_ms;
  protocol.rep_ms = spec.rep_ms;
  // Triton takes what rep_ms allows, down to one repetition; the CPU path keeps a few more, so that a
  // point whose flush fills most of rep_ms still has a spread worth its quantiles (never more than
  // max_repeat allows: the protocol document says what was done).
  protocol.min_repeat = spec.min_repeat.value_or(backend == Backend::cuda ? 1 : std::min(kCpuMinRepeat, spec.max_repeat));
  protocol.max_repeat = spec.max_repeat;
  protocol.flush_bytes =
      spec.flush_bytes.value_or(backend == Backend::cuda ? kGpuFlushBytes : cpu_last_level_cache_bytes());
  protocol.quantiles = spec.quantiles;
  return protocol;
}

Json protocol_to_json(const Protocol& protocol) {
  return Json{{"name", protocol.name},
              {"timer", protocol.timer},
              {"warmup_ms", protocol.warmup_ms},
              {"rep_ms", protocol.rep_ms},
              {"min_repeat", protocol.min_repeat},
              {"max_repeat", protocol.max_repeat},
              {"flush_bytes", protocol.flush_bytes},
              {"quantiles", protocol.quantiles},
              {"quantile_method", protocol.quantile_method},
              {"primaryStatistic", protocol.primary_statistic}};
}

Timing repetition_counts(double estimate_ms, const Protocol& protocol) {
  const double guarded_ms = std::max(estimate_ms, kMinEstimateMs);
  Timing timing;
  timing.estimate_ms = estimate_ms;
  // Triton leaves the warm-up uncapped; the cap below only keeps the integer conversion defined.
  timing.n_warmup = calls_within(protocol.warmup_ms, guarded_ms, std::numeric_limits<std::int64_t>::max());
  timing.n_repeat = std::min(std::max(calls_within(protocol.rep_ms, guarded_ms, protocol.max_repeat), protocol.min_repeat),
                             protocol.max_repeat);
  return timing;
}

Timing do_bench(const BoundMode& mode, void* stream, const Protocol& protocol, const TimedPhase& phase) {
  const auto timer = make_timer(stream, protocol);
  return do_bench(mode, *timer, protocol, phase);
}

Timing do_bench(const BoundMode& mode, BenchTimer& timer, const Protocol& protocol, const TimedPhase& phase) {
  mode.run();  // step 1: first call (lazy initialisation, autotuning) stays out of the estimate
  timer.synchronize();

  Timing timing = repetition_counts(estimate_call_ms(mode, timer), protocol);
  for (std::int64_t i = 0; i < timing.n_warmup; ++i) mode.run();  // no flush, as in Triton
  if (phase.before) phase.before();
  timing.samples_ns = timed_repetitions(mode, timer, timing.n_repeat);
  if (phase.after) phase.after();
  return timing;
}

void reserve_timer(const Protocol& protocol) { make_timer(nullptr, protocol); }

}  // namespace ks
