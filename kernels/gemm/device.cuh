#pragma once
// What gemm's CUDA implementations share: A and B generated on the device (the same values as
// make_matrix on the host), C, a workspace, the instance's stream, and the check that reads back only
// the entries it compares.
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>

#include "kernels/common/bf16.h"
#include "kernels/common/cublas.h"
#include "kernels/gemm/gemm.h"

namespace ks::gemm {

__device__ inline void store(float* out, std::uint64_t i, float value) { out[i] = value; }
__device__ inline void store(__nv_bfloat16* out, std::uint64_t i, float value) { out[i] = __float2bfloat16_rn(value); }

template <typename T> __global__ void fill(T* out, std::uint64_t count, std::uint64_t seed, std::uint64_t matrix) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    store(out, i, counter_symmetric(seed, matrix, i));
}

class DeviceOperands {
 public:
  explicit DeviceOperands(const Shape& s) : s(s) {
    a = memory.allocate_bytes(s.element_size() * static_cast<std::size_t>(s.m * s.k), "A");
    b = memory.allocate_bytes(s.element_size() * static_cast<std::size_t>(s.k * s.n), "B");
    c = memory.allocate_bytes(s.element_size() * static_cast<std::size_t>(s.m * s.n), "C");
    workspace = memory.allocate_bytes(kCublasWorkspaceBytes, "cuBLAS workspace");
    generate(a, s.m * s.k, kA);
    generate(b, s.k * s.n, kB);
    stream.synchronize();
  }

  cudaDataType_t type() const { return s.bf16 ? CUDA_R_16BF : CUDA_R_32F; }

  // Waits for the stream, then compares C with the reference; only the compared entries are copied
  // back, so checking a large product needs no large host buffer.
  CheckResult check() const {
    stream.synchronize();
    return check_entries(s, [this](std::int64_t row, std::int64_t col) { return read_c(row, col); });
  }

  Shape s;
  DeviceMemory memory;
  Stream stream;
  void *a = nullptr, *b = nullptr, *c = nullptr, *workspace = nullptr;

 private:
  void generate(void* buffer, std::int64_t count, Matrix matrix) {
    constexpr int kThreads = 256;
    const unsigned blocks = grid_for(count, kThreads);
    const auto n = static_cast<std::uint64_t>(count);
    if (s.bf16) fill<<<blocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(buffer), n, s.seed, matrix);
    else fill<<<blocks, kThreads, 0, stream>>>(static_cast<float*>(buffer), n, s.seed, matrix);
    KS_CUDA_LAUNCHED();
  }

  double read_c(std::int64_t row, std::int64_t col) const {
    const char* source = static_cast<const char*>(c) + s.element_size() * static_cast<std::size_t>(row * s.n + col);
    if (s.bf16) {
      std::uint16_t bits = 0;
      KS_CUDA(cudaMemcpy(&bits, source, sizeof bits, cudaMemcpyDeviceToHost));
      return bf16_bits_to_float(bits);
    }
    float value = 0;
    KS_CUDA(cudaMemcpy(&value, source, sizeof value, cudaMemcpyDeviceToHost));
    return value;
  }
};

}  // namespace ks::gemm
