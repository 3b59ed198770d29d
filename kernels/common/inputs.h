#pragma once
// Deterministic inputs: every value is a pure function of (seed, tensor, index), so a kernel's
// device code generates on the GPU exactly the tensors its host reference recomputes, and a check
// never needs to copy inputs across.
#include <cstdint>
#include <string>

#include "kernels/common/bf16.h"
#include "kernels/kernel.h"

#if defined(__CUDACC__)
#include "kernels/common/cuda.h"
#endif

#if defined(__CUDACC__)
#define KS_HOST_DEVICE __host__ __device__
#else
#define KS_HOST_DEVICE
#endif

namespace ks {

// splitmix64 of (seed, tensor, index), its top 24 bits as a float in [0, 1). Host and device compile
// the same integer code, so the values agree bit for bit. Zero only for one value in 2^24, so an
// output that was never written cannot pass a check by accident.
KS_HOST_DEVICE inline float counter_uniform(std::uint64_t seed, std::uint64_t tensor, std::uint64_t index) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + tensor * 0xD1B54A32D192ED03ull + index;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z = z ^ (z >> 31);
  return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
}

// The same value mapped to [-1, 1).
KS_HOST_DEVICE inline float counter_symmetric(std::uint64_t seed, std::uint64_t tensor, std::uint64_t index) {
  return 2.0f * counter_uniform(seed, tensor, index) - 1.0f;
}

#if defined(__CUDACC__)
// out[i] = counter_symmetric(seed, tensor, i) for i < count, rounded to T: a generated tensor,
// written on the device.
template <class T>
__global__ void fill_symmetric(T* out, std::uint64_t count, std::uint64_t seed, std::uint64_t tensor) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    out[i] = from_float<T>(counter_symmetric(seed, tensor, i));
}

// fill_symmetric of `count` elements at `out`, bf16 or fp32, enqueued on `stream`.
inline void generate_symmetric(void* out, bool bf16, std::uint64_t count, std::uint64_t seed, std::uint64_t tensor,
                               cudaStream_t stream) {
  constexpr int kThreads = 256;
  const unsigned blocks = grid_for(static_cast<std::int64_t>(count), kThreads);
  if (bf16) fill_symmetric<<<blocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(out), count, seed, tensor);
  else fill_symmetric<<<blocks, kThreads, 0, stream>>>(static_cast<float*>(out), count, seed, tensor);
  KS_CUDA_LAUNCHED();
}
#endif

// The parameters of a kernel whose inputs are drawn by this generator (every implementation) or by
// torch's (its Python implementations only): `seed` and `inputs`. `drawn` names what is drawn
// ("A and B"), `torch_draw` says how torch draws it.
inline void declare_drawn_inputs(KernelDeclaration& kernel, const std::string& drawn, const std::string& torch_draw) {
  kernel.integer("seed", 0, "seed of the generated inputs").min(0);
  kernel.choice("inputs", "counter", {"counter", "torch_rand"},
                "how " + drawn + " are drawn: counter (the counter-based generator, every implementation) or " +
                    "torch_rand (" + torch_draw + ")");
}

}  // namespace ks
