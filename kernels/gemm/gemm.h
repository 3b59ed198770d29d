#pragma once
// gemm: C = A·B, row-major, A M×K, B K×N, C M×N. The roofline every other figure is read against.
// This header is shared by the schema (gemm.cpp), the CPU implementation (gemm_cpu.cpp) and the
// cuBLASLt implementation (gemm_cublaslt.cu): parameters, the input generator that host and device
// share, and the sampled check against double-precision dot products.
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.h"

#if defined(__CUDACC__)
#define KS_GEMM_HOST_DEVICE __host__ __device__
#else
#define KS_GEMM_HOST_DEVICE
#endif

namespace ks::gemm {

struct Params {
  std::int64_t m = 1024, n = 1024, k = 1024;
  std::string dtype = "bf16";  // bf16: bf16 inputs, fp32 accumulation; fp32: everything fp32
  std::uint64_t seed = 0;

  bool is_bf16() const { return dtype == "bf16"; }
};

Params params_from_json(const Json& j);

enum Matrix : std::uint64_t { kA = 1, kB = 2 };

// splitmix64 of (seed, matrix, index) -> uniform in [-1, 1): a pure function of its arguments, so
// the GPU generates the same matrices on the device that the host check recomputes. Zero only for
// one in 2^24 values, so a kernel that writes nothing cannot pass the check.
KS_GEMM_HOST_DEVICE inline float input_value(std::uint64_t seed, std::uint64_t matrix, std::uint64_t index) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + matrix * 0xD1B54A32D192ED03ull + index;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z = z ^ (z >> 31);
  const float unit = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
  return 2.0f * unit - 1.0f;
}

// Rounds to the nearest bf16 (ties to even), returned as the float it represents: what
// __float2bfloat16_rn does on the device.
inline float round_to_bf16(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0) return value;  // NaN stays NaN
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  bits &= 0xFFFF0000u;
  std::memcpy(&value, &bits, sizeof bits);
  return value;
}

// The value an implementation sees at A[row, col] (matrix kA) or B[row, col] (kB), rounded to dtype.
float element(const Params& p, Matrix matrix, std::int64_t row, std::int64_t col);

// A whole matrix, row-major, rounded to dtype (bf16 values held as float).
std::vector<float> make_matrix(const Params& p, Matrix matrix);

// The CPU product: blocked over rows, columns and K, row blocks spread over hardware threads;
// accumulation in fp32. c must hold m·n floats.
void multiply(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n, std::int64_t k);

// Work of one product: 2·M·N·K FLOPs; A and B read and C written, in the dtype's size (C in bf16 for
// bf16, as torch.matmul returns it).
double flops(const Params& p);
double bytes(const Params& p);

// Compares `got(row, col)` with the double-precision dot product of the same rounded inputs at a
// sample of entries (every entry when the matrix is small). The error of an entry is
// |got − exact| / Σ_k |A[row,k]·B[k,col]|: the scale of a dot product's rounding error, which stays
// meaningful for entries whose exact value is near zero.
CheckResult check_entries(const Params& p, const std::function<double(std::int64_t row, std::int64_t col)>& got);

// Error allowed by check_entries: fp32 accumulation over K terms; bf16 adds the output's rounding.
double tolerance(const Params& p);

std::unique_ptr<Instance> make_cpu_instance(const Params& p);
// Defined in gemm_cublaslt.cu; without CUDA, gemm_cublaslt_stub.cpp throws "built without CUDA".
std::unique_ptr<Instance> make_cublaslt_instance(const Params& p);
std::unique_ptr<Instance> make_cublas_instance(const Params& p);

}  // namespace ks::gemm
