#pragma once
// Device memory as the device reports it: what a point really holds, library workspaces, lazy
// allocations and caching allocators included, not only what an implementation counts itself.
#include <cstddef>
#include <optional>

namespace ks {

// Bytes in use on the current GPU (cudaMemGetInfo: total − free); nothing in a build without CUDA
// or when the query fails.
std::optional<std::size_t> device_memory_in_use();

// The most device memory in use above a baseline, over the samples taken since the last reset: the
// worker sets the baseline before it makes an instance and samples after setup, after binding a
// mode, after timing and after checking. Memory allocated and freed again between two samples is
// not seen; what a caching allocator keeps is.
class DeviceMemoryPeak {
 public:
  // Takes the baseline (call with nothing of the point allocated yet).
  void start();
  void reset_peak() { peak_ = 0; }
  void sample();
  std::size_t peak_bytes() const { return peak_; }

 private:
  std::optional<std::size_t> baseline_;
  std::size_t peak_ = 0;
};

}  // namespace ks
