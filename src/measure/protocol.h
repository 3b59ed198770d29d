#pragma once
// The timing protocols a sweep file can name, and the one entry that times a point under any of them:
//   do_bench  triton.testing.do_bench's loop: warm-up and repetitions from a 5-call estimate, a flush
//             before every timed call, one pair of marks per call (do_bench.h);
//   cold      NVBench's cold measurement: per sample a flush, the stream held until the call is
//             queued, the SM clock read; sampling stops on a noise goal or a timeout (cold.h);
//   graph     triton.testing.do_bench_cudagraph's loop: the calls captured into a CUDA graph and its
//             replays timed, with an optional flush before each call (graph.h).
// The marks, flush, hold, clock reads and capture are a backend's (timer.h); the loops are written
// once.
#include <cstdint>
#include <functional>

#include "config/sweep_spec.h"
#include "kernels/kernel.h"
#include "measure/measurement.h"
#include "measure/timer.h"

namespace ks {

// Fills the defaults of `spec` for a backend: the timer's name, the flush size (do_bench and graph:
// Triton's 256 MiB on a GPU; cold: `gpu_l2_bytes`, the device's L2 cache, where it is known; on the
// CPU the last-level cache), min_repeat's. Throws std::invalid_argument for an unknown name.
Protocol resolve_protocol(const ProtocolSpec& spec, Backend backend, std::int64_t gpu_l2_bytes = 0);

// The BenchmarkProtocol spec content of a resolved protocol: every parameter its protocol uses, and
// only those (what its digest covers).
Json protocol_to_json(const Protocol& protocol);

// What the caller does around the timed samples: `before` once the warm-up is submitted (while it
// runs), `after` once the timed samples have completed. How the GPU's state is read at the start
// and the end of a point's measurement.
struct TimedPhase {
  std::function<void()> before, after;
};

// Times mode.run() under protocol.name's loop on the backend protocol.timer names ("steady_clock",
// or "cuda_events" on `stream`, a cudaStream_t, which needs a build with CUDA). Throws what the
// kernel throws, and std::runtime_error naming the CUDA call that failed.
Timing time_point(const BoundMode& mode, void* stream, const Protocol& protocol, const TimedPhase& phase = {});
// The same on a timer of the caller's (a test's synthetic one).
Timing time_point(const BoundMode& mode, BenchTimer& timer, const Protocol& protocol, const TimedPhase& phase = {});

// The protocol's timer for `stream`.
std::unique_ptr<BenchTimer> make_timer(void* stream, const Protocol& protocol);

// Makes what the protocol's timer keeps for the whole process (the GPU's flush buffer) now, so that
// device memory measured around a point does not count it.
void reserve_timer(const Protocol& protocol);

// The samples' SM clocks as the timer read them, kept in `timing` where any was read.
void keep_clocks_read(std::vector<double> clocks_mhz, Timing& timing);

// floor(budget_ms / estimate_ms), at least 1 and at most `cap`, computed in double so that a huge
// ratio cannot overflow.
std::int64_t calls_within(double budget_ms, double estimate_ms, std::int64_t cap);

}  // namespace ks
