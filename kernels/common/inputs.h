#pragma once
// Deterministic inputs: every value is a pure function of (seed, tensor, index), so a kernel's
// device code generates on the GPU exactly the tensors its host reference recomputes, and a check
// never needs to copy inputs across.
#include <cstdint>

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

}  // namespace ks
