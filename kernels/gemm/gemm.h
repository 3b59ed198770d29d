#pragma once
// gemm: C = A·B, row-major, A M×K, B K×N, C M×N. The roofline every other figure is read against.
// What the implementations share: the shape read from a point, the input generator that host and
// device share, the CPU product, and the sampled check against double-precision dot products.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/common/inputs.h"
#include "kernels/kernel.h"

namespace ks::gemm {

// A point's shape as the implementations use it.
struct Shape {
  std::int64_t m, n, k;
  bool bf16;  // bf16 inputs and output with fp32 accumulation; else everything fp32
  std::uint64_t seed;
  // The shape of a point a C++ implementation runs: throws std::invalid_argument when its inputs
  // are drawn by torch's generator (inputs: torch_rand), which only the Python implementation
  // reproduces; the C++ implementations generate the counter-based inputs alone.
  explicit Shape(const Parameters& p) : Shape(p, true) {}
  // The shape of any point, whoever draws its inputs: what the work counts read.
  static Shape of_any_draw(const Parameters& p) { return Shape(p, false); }
  std::size_t element_size() const { return bf16 ? 2 : 4; }
  std::string describe() const;  // "67x45x131 bf16"

 private:
  Shape(const Parameters& p, bool generated_here);
};

enum Matrix : std::uint64_t { kA = 1, kB = 2 };

// The value an implementation sees at A[row, col] (matrix kA) or B[row, col] (kB): uniform in
// [-1, 1), rounded to the dtype.
float element(const Shape& s, Matrix matrix, std::int64_t row, std::int64_t col);

// A whole matrix, row-major, rounded to the dtype (bf16 values held as float).
std::vector<float> make_matrix(const Shape& s, Matrix matrix);

// The CPU product: blocked over rows, columns and K, row blocks spread over hardware threads;
// accumulation in fp32. c must hold m·n floats.
void multiply(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n, std::int64_t k);

// Compares `got(row, col)` with the double-precision dot product of the same rounded inputs at a
// sample of entries (every entry when the matrix is small). The error of an entry is
// |got − exact| / Σ_k |A[row,k]·B[k,col]|: the scale of a dot product's rounding error, which stays
// meaningful for entries whose exact value is near zero.
CheckResult check_entries(const Shape& s, const std::function<double(std::int64_t row, std::int64_t col)>& got);

// 2·M·N·K FLOPs; A, B and C moved once in the dtype's size.
Work work(const Shape& s);

// Error allowed by check_entries: fp32 accumulation over K terms; bf16 adds the output's rounding.
double tolerance(const Shape& s);

}  // namespace ks::gemm
