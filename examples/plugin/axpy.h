#pragma once
// axpy: y = alpha·x + y over n elements, the BLAS level-1 routine. What its implementations share:
// the point's shape, the inputs (host and device generate the same values), and the check.
#include <cstddef>
#include <cstdint>

#include "kernels/common/bf16.h"
#include "kernels/common/inputs.h"
#include "kernels/kernel.h"

namespace axpy {

// A point's shape as the implementations use it.
struct Shape {
  std::int64_t n;
  bool bf16;  // x and y stored as bf16, arithmetic in fp32; else everything fp32
  float alpha;
  std::uint64_t seed;
  explicit Shape(const ks::Parameters& p)
      : n(p.get<std::int64_t>("n")),
        bf16(p.is("dtype", "bf16")),
        alpha(static_cast<float>(p.get<double>("alpha"))),
        seed(p.get<std::uint64_t>("seed")) {}
  std::size_t element_size() const { return bf16 ? 2 : 4; }
};

// Which tensor a generated value belongs to.
enum Tensor : std::uint64_t { kX = 1, kY = 2 };

// x[i] or y[i] before the first call: uniform in [-1, 1), rounded to the dtype.
inline float input(const Shape& s, Tensor tensor, std::int64_t i) {
  const float value = ks::counter_symmetric(s.seed, tensor, static_cast<std::uint64_t>(i));
  return s.bf16 ? ks::round_to_bf16(value) : value;
}

// Compares y (n values, bf16 ones widened to float) after exactly one call on the generated inputs
// with alpha·x + y computed in double. The error of an element is |got − exact| / (|alpha·x| + |y|):
// fp32 allows 2^-22 (twice the arithmetic's two roundings), bf16 2^-7 (twice the result's rounding
// to bf16, 2^-8).
ks::CheckResult check(const Shape& s, const float* y);

}  // namespace axpy
