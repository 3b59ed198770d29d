#pragma once
// The marks and the cache flush of one backend, as the do_bench loop (do_bench.cpp) drives them.
// The loop is written once; a backend only says how to mark time, flush and wait.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

namespace ks {

class BenchTimer {
 public:
  virtual ~BenchTimer() = default;
  // Makes marks 0 .. count-1 available to record(); marks already read may be reused.
  virtual void reserve_marks(std::size_t count) = 0;
  // Marks "now" in the order of the work submitted (on a GPU: an event on the stream).
  virtual void record(std::size_t mark) = 0;
  // Evicts the caches by zeroing the flush buffer (nothing when its size is 0).
  virtual void flush() = 0;
  // Waits until every submitted call and mark has completed.
  virtual void synchronize() = 0;
  // Time between two recorded marks, in ns; valid after synchronize().
  virtual double elapsed_ns(std::size_t from, std::size_t to) const = 0;

  // The cold protocol's hold: work submitted after hold() starts only at release(), so that a call's
  // launches are all queued before the first of them runs (on a GPU: a kernel spinning on a host
  // flag). Nothing to hold where a call runs as it is submitted (the CPU).
  virtual void hold() {}
  virtual void release() {}

  // The SM clock over the work submitted between start_clock(i) and stop_clock(i) (on a GPU: SM 0's
  // cycle counter against the global timer), in MHz once synchronised; NaN where it is not read.
  // Clocks 0 .. count-1 are made available, and unread, by reserve_clocks(count): one clock is read
  // once after each reserve (a clock no read reached stays NaN rather than showing an older read).
  virtual void reserve_clocks(std::size_t) {}
  virtual void start_clock(std::size_t) {}
  virtual void stop_clock(std::size_t) {}
  // The clocks 0 .. count-1, read together once synchronised.
  virtual std::vector<double> sm_clocks_mhz(std::size_t count) const {
    return std::vector<double>(count, std::numeric_limits<double>::quiet_NaN());
  }
  // The clock the device runs at when nothing slows it (its peak), in MHz; NaN where unknown.
  virtual double default_sm_clock_mhz() const { return std::numeric_limits<double>::quiet_NaN(); }

  // The graph protocol: capture() records what `calls` submits, without running it (on a GPU: a
  // stream capture into a CUDA graph); replay() submits it all again. On the CPU a replay runs the
  // calls back to back.
  virtual void capture(const std::function<void()>& calls) = 0;
  virtual void replay() = 0;
};

// steady_clock marks; the flush is a memset of a process-wide buffer of flush_bytes.
std::unique_ptr<BenchTimer> make_steady_clock_timer(std::int64_t flush_bytes);

#ifdef KERNELSWEEP_HAVE_CUDA
// CUDA event marks on `stream` (a cudaStream_t; nullptr is the default stream); the flush is a
// cudaMemsetAsync of a device buffer of flush_bytes, allocated once per process on the current device.
std::unique_ptr<BenchTimer> make_cuda_event_timer(void* stream, std::int64_t flush_bytes);
// The current device's L2 cache, in bytes: what the cold protocol's flush zeroes by default.
std::int64_t gpu_l2_cache_bytes();
#endif

}  // namespace ks
