#pragma once
// bf16 on the host: the rounding the device's __float2bfloat16_rn does, and the conversions of raw
// bf16 bits that copies from the device come back as; on the device, the conversions between float
// and the element types that the kernels compute through.
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#endif

namespace ks {

// The bf16 nearest to `value` (ties to even), as the float it represents. NaN stays NaN.
inline float round_to_bf16(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0) return value;
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  bits &= 0xFFFF0000u;
  std::memcpy(&value, &bits, sizeof bits);
  return value;
}

// The float that bf16 bits stand for: they are the upper half of its bits.
inline float bf16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t widened = static_cast<std::uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &widened, sizeof value);
  return value;
}

// The bits of round_to_bf16(value).
inline std::uint16_t float_to_bf16_bits(float value) {
  const float rounded = round_to_bf16(value);
  std::uint32_t bits;
  std::memcpy(&bits, &rounded, sizeof bits);
  return static_cast<std::uint16_t>(bits >> 16);
}

#if defined(__CUDACC__)
__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
// Rounded to the nearest value of T (bf16: ties to even, as round_to_bf16).
template <class T> __device__ inline T from_float(float v) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(v);
  else return static_cast<T>(v);
}
#endif

}  // namespace ks
