#pragma once
// IEEE fp16 (binary16) on the host, by bits: every compiler kernelsweep builds with (clang before 15
// has no _Float16 on x86-64). Rounds to nearest, ties to even; overflow goes to infinity, NaN stays NaN.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace ks {

inline float fp16_bits_to_float(std::uint16_t bits) {
  const float sign = (bits & 0x8000u) ? -1.0f : 1.0f;
  const unsigned exponent = (bits >> 10) & 0x1Fu;
  const unsigned mantissa = bits & 0x3FFu;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);  // zero, subnormal
  if (exponent == 31) return mantissa ? std::numeric_limits<float>::quiet_NaN() : sign * INFINITY;
  const std::uint32_t wide =
      (static_cast<std::uint32_t>(bits & 0x8000u) << 16) | ((exponent - 15 + 127) << 23) | (mantissa << 13);
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

inline std::uint16_t float_to_fp16_bits(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude >= 0x7F800000u) return static_cast<std::uint16_t>(sign | (magnitude > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (magnitude >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // 65520 and up round to infinity
  if (magnitude < 0x38800000u) {  // below 2^-14: a subnormal (or zero), in units of 2^-24, exact in float
    float below;
    std::memcpy(&below, &magnitude, sizeof below);
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(below * 16777216.0f)));
  }
  std::uint32_t half = (((magnitude >> 23) - 127 + 15) << 10) | ((magnitude & 0x7FFFFFu) >> 13);
  const std::uint32_t rest = magnitude & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // a carry into the exponent is right
  return static_cast<std::uint16_t>(sign | half);
}

}  // namespace ks
