#pragma once
// peak_flops: the matrix-multiply rate a GPU reaches in each arithmetic, for the rooflines of
// kernelsweep calibrate: one size×size×size product through cuBLASLt, in the dtype's own arithmetic
// (fp64; fp32 without TF32; tf32; bf16 and fp16 with fp32 accumulation; fp8 e4m3 inputs with fp32
// accumulation and a bf16 result). 2·size³ FLOPs a call; the bytes are A's and B's read once and C's
// written once. Its inputs are generated on the device (inputs.h); a check compares sampled entries
// with float64 sums of the stored inputs. (A CPU's rate: kernel fma_chains.)
#include <cstdint>
#include <string>

#include "kernels/kernel.h"

namespace ks::peak_flops {

enum class Dtype { fp64, fp32, tf32, bf16, fp16, fp8 };

struct Problem {
  Dtype dtype = Dtype::fp32;
  std::string dtype_name;
  std::int64_t size = 8192;
  std::uint64_t seed = 0;

  explicit Problem(const Parameters& p);
};

// Bytes of one element of A and B, and of C (fp8 products are written in bf16).
std::int64_t input_bytes(Dtype dtype);
std::int64_t output_bytes(Dtype dtype);

Work work(const Problem& p);

}  // namespace ks::peak_flops
