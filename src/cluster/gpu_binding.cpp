#include "cluster/gpu_binding.h"

#include <stdexcept>
#include <string>

#ifdef KERNELSWEEP_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace ks {

int choose_gpu(int local_rank, int visible_gpus) {
  if (visible_gpus <= 0) return -1;
  return local_rank % visible_gpus;
}

void bind_gpu(int ordinal) {
#ifdef KERNELSWEEP_HAVE_CUDA
  if (const cudaError_t e = cudaSetDevice(ordinal); e != cudaSuccess)
    throw std::runtime_error("cudaSetDevice(" + std::to_string(ordinal) + ") failed: " + cudaGetErrorString(e));
  cudaFree(nullptr);  // create the context now, outside any timed region
#else
  (void)ordinal;
#endif
}

}  // namespace ks
