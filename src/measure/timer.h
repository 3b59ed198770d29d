#pragma once
// The marks and the cache flush of one backend, as the do_bench loop (do_bench.cpp) drives them.
// The loop is written once; a backend only says how to mark time, flush and wait.
#include <cstddef>
#include <cstdint>
#include <memory>

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
};

// steady_clock marks; the flush is a memset of a process-wide buffer of flush_bytes.
std::unique_ptr<BenchTimer> make_steady_clock_timer(std::int64_t flush_bytes);

#ifdef KERNELSWEEP_HAVE_CUDA
// CUDA event marks on `stream` (a cudaStream_t; nullptr is the default stream); the flush is a
// cudaMemsetAsync of a device buffer of flush_bytes, allocated once per process on the current device.
std::unique_ptr<BenchTimer> make_cuda_event_timer(void* stream, std::int64_t flush_bytes);
#endif

}  // namespace ks
