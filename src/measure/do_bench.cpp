#include "measure/do_bench.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "measure/timer.h"

namespace ks {
namespace {

constexpr int kEstimateCalls = 5;

}  // namespace

double estimate_call_ms(const BoundMode& mode, BenchTimer& timer, bool flush) {
  timer.reserve_marks(2);
  timer.record(0);
  for (int i = 0; i < kEstimateCalls; ++i) {
    if (flush) timer.flush();
    mode.run();
  }
  timer.record(1);
  timer.synchronize();
  return timer.elapsed_ns(0, 1) / 1e6 / kEstimateCalls;
}

void time_one_by_one(BenchTimer& timer, std::int64_t samples, bool read_clocks, const std::function<void()>& call,
                     Timing& timing) {
  const auto count = static_cast<std::size_t>(samples);
  timer.reserve_marks(2 * count);
  if (read_clocks) timer.reserve_clocks(count);
  for (std::size_t i = 0; i < count; ++i) {
    timer.flush();
    if (read_clocks) timer.start_clock(i);
    timer.record(2 * i);
    call();
    timer.record(2 * i + 1);
    if (read_clocks) timer.stop_clock(i);
  }
  timer.synchronize();
  timing.samples_ns.resize(count);
  for (std::size_t i = 0; i < count; ++i) timing.samples_ns[i] = timer.elapsed_ns(2 * i, 2 * i + 1);
  if (read_clocks) keep_clocks_read(timer.sm_clocks_mhz(count), timing);
}

void keep_clocks_read(std::vector<double> clocks_mhz, Timing& timing) {
  if (std::any_of(clocks_mhz.begin(), clocks_mhz.end(), [](double mhz) { return !std::isnan(mhz); }))
    timing.sample_sm_clock_mhz = std::move(clocks_mhz);
}

std::int64_t calls_within(double budget_ms, double estimate_ms, std::int64_t cap) {
  const double calls = std::floor(budget_ms / estimate_ms);
  if (!(calls < static_cast<double>(cap))) return std::max<std::int64_t>(1, cap);
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(calls));
}

Timing repetition_counts(double estimate_ms, const Protocol& protocol) {
  const double guarded_ms = std::max(estimate_ms, kMinEstimateMs);
  Timing timing;
  timing.estimate_ms = estimate_ms;
  // Triton leaves the warm-up uncapped; the cap below only keeps the integer conversion defined.
  timing.n_warmup = calls_within(protocol.warmup_ms, guarded_ms, std::numeric_limits<std::int64_t>::max());
  timing.n_repeat =
      std::min(std::max(calls_within(protocol.rep_ms, guarded_ms, protocol.max_repeat), protocol.min_repeat),
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

  Timing timing = repetition_counts(estimate_call_ms(mode, timer, /*flush=*/true), protocol);
  for (std::int64_t i = 0; i < timing.n_warmup; ++i) mode.run();  // no flush, as in Triton
  if (phase.before) phase.before();
  time_one_by_one(timer, timing.n_repeat, protocol.sm_clock_per_sample, mode.run, timing);
  if (phase.after) phase.after();
  timing.timed_calls = timing.n_repeat;
  return timing;
}

}  // namespace ks
