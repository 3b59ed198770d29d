#pragma once
// The do_bench protocol, as triton.testing.do_bench runs it:
//   1. one call, synchronise;
//   2. estimate one call from 5 calls, each preceded by the flush, timed together (flush included);
//   3. n_warmup = max(1, floor(warmup_ms / estimate)), n_repeat = max(1, floor(rep_ms / estimate)),
//      n_repeat raised to min_repeat (1 on a GPU, as in Triton) and capped at max_repeat, the
//      estimate guarded against zero;
//   4. n_warmup calls without flushing;
//   5. for each repetition: flush, start mark, call, end mark; synchronise once at the end.
// On a GPU the marks are CUDA events on the instance's stream and the flush a cudaMemsetAsync of a
// flush_bytes buffer; on the CPU the marks are steady_clock reads and the flush a memset of a buffer
// the size of the last-level cache.
#include <functional>
#include <string>
#include <vector>

#include "measure/protocol.h"

namespace ks {

// Times mode.run() under `protocol`, the steps above: 1 + 5 + n_warmup + n_repeat calls in all.
// protocol.timer picks the backend ("steady_clock", or "cuda_events" on `stream`, a cudaStream_t,
// which needs a build with CUDA). Throws what the kernel throws, and std::runtime_error naming the
// CUDA call that failed.
Timing do_bench(const BoundMode& mode, void* stream, const Protocol& protocol, const TimedPhase& phase = {});

// The same loop on a timer of the caller's: how a test drives it with a synthetic clock (and how the
// Python worker's loop, python/kernelsweep/do_bench.py, is shown to be the same).
Timing do_bench(const BoundMode& mode, BenchTimer& timer, const Protocol& protocol, const TimedPhase& phase = {});

// Step 2 alone: one call's time from 5 calls timed together, each after a flush when `flush` (as
// Triton's do_bench; its do_bench_cudagraph estimates without).
double estimate_call_ms(const BoundMode& mode, BenchTimer& timer, bool flush);

// Step 5 alone, and the graph protocol's flushed replays: `samples` samples of one call() each, per
// sample a flush, the SM clock's start read (with read_clocks), start mark, call(), end mark, the
// clock's stop read; one synchronisation at the end. Fills timing.samples_ns and the clocks read.
void time_one_by_one(BenchTimer& timer, std::int64_t samples, bool read_clocks, const std::function<void()>& call,
                     Timing& timing);

// Step 3 alone: n_warmup and n_repeat from one call's estimated time (the estimate raised to
// kMinEstimateMs when the timer read less, so a call too short to see never divides by zero);
// n_repeat is raised to min_repeat, then capped at max_repeat.
// Returns a Timing with estimate_ms as measured and no samples.
inline constexpr double kMinEstimateMs = 1e-3;
Timing repetition_counts(double estimate_ms, const Protocol& protocol);

// Quantile of sorted values by linear interpolation between closest ranks (numpy's "linear", the
// method of torch.quantile too), q in [0, 1]. Throws std::invalid_argument on no values or a bad q.
double quantile_linear(const std::vector<double>& sorted, double q);
// The median of the values (any order), by quantile_linear; NaN where there are none.
double median_of(std::vector<double> values);

// The aggregates of the samples (any order): median, p20 and p80 by quantile_linear (as Triton's
// quantiles [0.5, 0.2, 0.8] give them: the median of an even count is interpolated, not the lower
// middle value of torch.median), mean, min, max, and the SAMPLE standard deviation (divisor n - 1,
// as torch.std by default and numpy.std(ddof=1); 0 for one sample). Throws on no samples.
Statistics summarize(const std::vector<double>& samples_ns);

// The quantiles `levels` of the samples (any order), by quantile_linear, in the order of `levels`:
// what a protocol's `quantiles` asks for. No samples give none.
std::vector<Quantile> quantiles_of(const std::vector<double>& samples_ns, const std::vector<double>& levels);

// Size in bytes of the last-level CPU cache (sysfs), or 32 MiB when unknown.
std::int64_t cpu_last_level_cache_bytes();

}  // namespace ks
