#pragma once
// What every CUDA implementation repeats: the error check, the device's attributes, a stream of its
// own, device memory that counts what it holds, and copies of it back to the host. Include from .cu
// files, or from .cpp files of a build with CUDA.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/common/bf16.h"

namespace ks {

// Joins its arguments as a stream writes them: messages in .cu files are built with this, since
// fmt's compile-time format strings do not build under nvcc.
template <typename... Parts> std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

// "host NAME, rank R": where an error happened, for the message of a sweep over many nodes. The rank
// is read from the launcher's environment (Open MPI, PMIx, MPICH, Slurm), which workers inherit.
inline std::string where_this_runs() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  for (const char* variable : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* rank = std::getenv(variable)) return concat("host ", host, ", rank ", rank);
  return concat("host ", host);
}

// Throws std::runtime_error naming the call, file:line, host and rank, and CUDA's message.
inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess)
    throw std::runtime_error(concat(call, " failed at ", file, ":", line, " (", where_this_runs(),
                                    "): ", cudaGetErrorString(status), " (", cudaGetErrorName(status), ")"));
}

#define KS_CUDA(call) ::ks::check_cuda((call), #call, __FILE__, __LINE__)
#define KS_CUDA_LAUNCHED() ::ks::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

// An attribute of the current device.
inline int device_attribute(cudaDeviceAttr attribute) {
  int device = 0, value = 0;
  KS_CUDA(cudaGetDevice(&device));
  KS_CUDA(cudaDeviceGetAttribute(&value, attribute, device));
  return value;
}

#if defined(__CUDACC__)
// A grid-stride loop's first index and its stride: for (i = grid_index(); i < n; i += grid_stride()).
__device__ inline std::int64_t grid_index() { return blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; }
__device__ inline std::int64_t grid_stride() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }
#endif

// Multiprocessors of the current device: grids are sized from it, never from one GPU's count.
inline int sm_count() { return device_attribute(cudaDevAttrMultiProcessorCount); }

// Blocks for a grid-stride loop over n items: enough to cover them, at most `per_sm` per multiprocessor.
inline unsigned grid_for(std::int64_t n, int threads, int per_sm = 32) {
  const std::int64_t cover = (n + threads - 1) / threads;
  const std::int64_t cap = static_cast<std::int64_t>(sm_count()) * per_sm;
  return static_cast<unsigned>(cover < 1 ? 1 : (cover < cap ? cover : cap));
}

// A non-blocking stream, destroyed (after it drains) with its owner.
class Stream {
 public:
  Stream() { KS_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  // Of `priority`: lower numbers are served first.
  explicit Stream(int priority) { KS_CUDA(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, priority)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  cudaStream_t get() const { return stream_; }
  operator cudaStream_t() const { return stream_; }
  void synchronize() const { KS_CUDA(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

// A CUDA event, for timing unless `flags` say otherwise, destroyed with its owner.
class Event {
 public:
  explicit Event(unsigned flags = cudaEventDefault) { KS_CUDA(cudaEventCreateWithFlags(&event_, flags)); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { cudaEventDestroy(event_); }
  operator cudaEvent_t() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Every device allocation of an instance, freed together, with the bytes it holds counted (what an
// instance's device_bytes() reports).
class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory() {
    for (void* block : blocks_) cudaFree(block);
  }
  template <typename T> T* allocate(std::size_t count, const char* what) {
    return static_cast<T*>(allocate_bytes(count * sizeof(T), what));
  }
  void* allocate_bytes(std::size_t bytes, const char* what) {
    void* block = nullptr;
    const cudaError_t status = cudaMalloc(&block, bytes > 0 ? bytes : 1);
    if (status != cudaSuccess)
      throw std::runtime_error(concat("cudaMalloc of ", bytes, " bytes for ", what, " failed (", total_,
                                      " bytes held; ", where_this_runs(), "): ", cudaGetErrorString(status)));
    blocks_.push_back(block);
    total_ += bytes;
    return block;
  }
  std::size_t total_bytes() const { return total_; }

 private:
  std::vector<void*> blocks_;
  std::size_t total_ = 0;
};

// `count` elements of device memory, bf16 or fp32, copied to the host as floats.
inline std::vector<float> download_floats(const void* source, std::size_t count, bool bf16) {
  std::vector<float> values(count);
  if (!bf16) {
    KS_CUDA(cudaMemcpy(values.data(), source, count * sizeof(float), cudaMemcpyDeviceToHost));
    return values;
  }
  std::vector<std::uint16_t> bits(count);
  KS_CUDA(cudaMemcpy(bits.data(), source, count * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
  std::transform(bits.begin(), bits.end(), values.begin(), bf16_bits_to_float);
  return values;
}

}  // namespace ks
