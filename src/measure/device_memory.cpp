#include "measure/device_memory.h"

#ifdef KERNELSWEEP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace ks {

std::optional<std::size_t> device_memory_in_use() {
#ifdef KERNELSWEEP_HAVE_CUDA
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    cudaGetLastError();  // not sticky: leave no error for the kernel's own checks to find
    return std::nullopt;
  }
  return total - free;
#else
  return std::nullopt;
#endif
}

void DeviceMemoryPeak::start() {
  baseline_ = device_memory_in_use();
  peak_ = 0;
}

void DeviceMemoryPeak::sample() {
  if (!baseline_) return;
  if (const auto used = device_memory_in_use(); used && *used > *baseline_ && *used - *baseline_ > peak_)
    peak_ = *used - *baseline_;
}

}  // namespace ks
