#include "measure/graph.h"

#include <algorithm>

#include "measure/do_bench.h"

namespace ks {
namespace {

// Each replay of n calls timed alone, as Triton's loop does (a synchronisation after each).
void timed_replays_of_many(BenchTimer& timer, std::int64_t calls, std::int64_t replays, bool read_clocks,
                           Timing& timing) {
  const auto count = static_cast<std::size_t>(replays);
  if (read_clocks) timer.reserve_clocks(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (read_clocks) timer.start_clock(i);
    timer.record(0);
    timer.replay();
    timer.record(1);
    if (read_clocks) timer.stop_clock(i);
    timer.synchronize();
    timing.samples_ns.push_back(timer.elapsed_ns(0, 1) / static_cast<double>(calls));
  }
  if (read_clocks) keep_clocks_read(timer.sm_clocks_mhz(count), timing);
}

}  // namespace

Timing graph(const BoundMode& mode, BenchTimer& timer, const Protocol& protocol, const TimedPhase& phase) {
  mode.run();
  timer.synchronize();
  Timing timing;
  timing.estimate_ms = estimate_call_ms(mode, timer, /*flush=*/false);
  timing.n_repeat = calls_within(protocol.rep_ms, std::max(timing.estimate_ms, kMinEstimateMs), protocol.max_repeat);
  const bool flushed = protocol.flush_bytes > 0;
  const std::int64_t captured_calls = flushed ? 1 : timing.n_repeat;
  timer.capture([&] {
    for (std::int64_t i = 0; i < captured_calls; ++i) mode.run();
  });
  timer.synchronize();
  if (phase.before) phase.before();
  if (flushed) {
    // Each replay of one call after a flush, between its own marks: do_bench's step 5, replayed.
    time_one_by_one(
        timer, timing.n_repeat, protocol.sm_clock_per_sample, [&timer] { timer.replay(); }, timing);
  } else {
    timed_replays_of_many(timer, timing.n_repeat, protocol.replays, protocol.sm_clock_per_sample, timing);
  }
  if (phase.after) phase.after();
  timing.timed_calls = flushed ? timing.n_repeat : timing.n_repeat * protocol.replays;
  return timing;
}

}  // namespace ks
