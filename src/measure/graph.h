#pragma once
// The graph protocol, triton.testing.do_bench_cudagraph's loop:
//   1. one call, synchronise (outside any capture: lazy initialisation, autotuning);
//   2. estimate one call from 5 calls timed together, no flush (as Triton: a capture costs too much
//      to estimate with);
//   3. without a flush (flush_bytes 0, the default): n = floor(rep_ms / estimate) calls (at least 1,
//      at most max_repeat) captured into one graph; each of `replays` samples is one replay timed
//      alone and synchronised, divided by n;
//      with a flush (flush_bytes > 0, which Triton's lacks): one call captured; n samples, each a
//      flush, start mark, replay, end mark, one synchronisation at the end.
// On a GPU the capture is a CUDA stream capture on the implementation's stream (which must not be the
// legacy default stream; a call that synchronises or allocates cannot be captured); on the CPU a
// replay runs the calls back to back. n_warmup is 0; n_repeat is n.
#include "measure/protocol.h"

namespace ks {

Timing graph(const BoundMode& mode, BenchTimer& timer, const Protocol& protocol, const TimedPhase& phase = {});

}  // namespace ks
