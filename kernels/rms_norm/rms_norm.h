#pragma once
// rms_norm: Liger-Kernel's RMSNorm (liger_kernel.ops.rms_norm) on x (tokens × hidden, row-major) and
// a weight w (hidden), forward and backward:
//
//   forward:  rstd = 1 / sqrt(mean(x²) + eps)          y  = x · rstd · (offset + w)
//   backward: m = dy · (offset + w)   dx = rstd · m − rstd³ · (m·x) / hidden · x   dw = Σ_rows dy · x · rstd
//
// Where each casting mode rounds to the dtype is spelled out in README.md. The element-wise steps are
// the member functions of Problem below, shared by the CPU and the CUDA implementations: the two
// round alike and differ only in the order of their fp32 sums. The float64 reference in check() is
// written separately from them.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/bf16.h"  // with CUDA's bf16 on the device
#include "kernels/common/inputs.h"
#include "kernels/kernel.h"

namespace ks::rms_norm {

enum class Casting : int { llama = 0, gemma = 1, none = 2 };
enum Tensor : std::uint64_t { kX = 1, kW = 2, kDy = 3 };  // ids of the generated inputs

// One point, and the arithmetic of each step as its dtype and casting mode do it (all in fp32,
// rounded to the dtype where `to_dtype` says).
struct Problem {
  std::int64_t tokens = 1, hidden = 1;
  bool bf16 = false;
  Casting casting = Casting::llama;
  float eps = 1e-6f, offset = 0.0f;
  std::uint64_t seed = 0;

  explicit Problem(const Parameters& p);

  KS_HOST_DEVICE float to_dtype(float v) const {
#if defined(__CUDA_ARCH__)
    return bf16 ? __bfloat162float(__float2bfloat16_rn(v)) : v;
#else
    return bf16 ? round_to_bf16(v) : v;
#endif
  }
  // Element `index` of a generated input: uniform in [-1, 1), as the dtype holds it.
  KS_HOST_DEVICE float input(Tensor tensor, std::uint64_t index) const {
    return to_dtype(counter_symmetric(seed, tensor, index));
  }
  // One term of the row's sum of squares (none: x·x is a product of the dtype).
  KS_HOST_DEVICE float square(float x) const { return casting == Casting::none ? to_dtype(x * x) : x * x; }
  // rstd from the row's sum of squares, as forward scales by it (fp32 in every mode; none holds
  // the sum and eps in the dtype, as Liger's bf16 sum and bf16 eps).
  KS_HOST_DEVICE float rstd(float sum_of_squares) const {
    const float h = static_cast<float>(hidden);
    if (casting == Casting::none) return 1.0f / sqrtf(to_dtype(sum_of_squares) / h + to_dtype(eps));
    return 1.0f / sqrtf(sum_of_squares / h + eps);
  }
  // rstd as forward saves it for backward: in the dtype for none, fp32 otherwise.
  KS_HOST_DEVICE float saved(float rstd) const { return casting == Casting::none ? to_dtype(rstd) : rstd; }
  KS_HOST_DEVICE float y(float x, float w, float rstd) const {
    if (casting == Casting::llama) return to_dtype(to_dtype(x * rstd) * (offset + w));
    if (casting == Casting::gemma) return to_dtype(x * rstd * (offset + w));
    return to_dtype(x * rstd * to_dtype(to_dtype(offset) + w));
  }
  // Backward, with rstd as saved: m, then c = −rstd²·(m·x)/hidden once per row, then dx (its sum
  // fused, written as an fma so that every compiler rounds it once) and the row's term of dw (llama:
  // a product of the dtype).
  KS_HOST_DEVICE float m(float dy, float w) const { return dy * (w + offset); }
  KS_HOST_DEVICE float c(float rstd, float dot) const {
    return -(1.0f / static_cast<float>(hidden)) * rstd * rstd * dot;
  }
  KS_HOST_DEVICE float dx(float x, float m, float rstd, float c) const { return to_dtype(dx_sum(x, m, rstd, c)); }
  // dx before its rounding, for a kernel that converts it to the dtype as it stores it.
  KS_HOST_DEVICE float dx_sum(float x, float m, float rstd, float c) const { return fmaf(rstd, m, rstd * (c * x)); }
  KS_HOST_DEVICE float dw_term(float x, float dy, float rstd) const {
    return casting == Casting::llama ? to_dtype(dy * to_dtype(x * rstd)) : dy * (x * rstd);
  }

  std::size_t element_size() const { return bf16 ? 2 : 4; }
  std::size_t rstd_size() const { return casting == Casting::none ? element_size() : 4; }
  std::string describe() const;  // "2048x4096 bf16 llama"
};

// Host tensors, row-major, values as the dtype holds them (bf16 held as float); rstd as saved.
struct Tensors {
  std::vector<float> x, w, dy;         // inputs
  std::vector<float> y, rstd, dx, dw;  // outputs
};

// The generated inputs, with every output sized and NaN.
Tensors make_inputs(const Problem& p);

// The CPU implementation: rows spread over the hardware threads; forward writes y and rstd,
// backward reads rstd and writes dx and dw.
void forward(const Problem& p, Tensors& t);
void backward(const Problem& p, Tensors& t);
// The passes of `mode`: forward, backward, or both (full, as Liger's benchmark times it).
void run(const Problem& p, Tensors& t, const std::string& mode);
// The CPU implementation's check: sets the outputs of `mode` to NaN (so that one left unwritten
// fails), runs it, and compares.
CheckResult run_and_check(const Problem& p, Tensors& t, const std::string& mode);

// Compares the outputs of `mode` in `got` with a float64 reference computed from got's inputs: the
// error of each element is |got − exact| / scale, scale being the sum of the magnitudes that the
// element's arithmetic combines. With `cpu` (the CPU implementation's run of the same point), also
// requires got's inputs to equal cpu's bit for bit and, for bf16, its outputs to equal cpu's in all
// but 1 % of the elements (what different fp32 summation orders can flip).
CheckResult check(const Problem& p, const std::string& mode, const Tensors& got, const Tensors* cpu = nullptr);

// FLOPs and the least bytes moved by one call of `mode`.
Work work(const Problem& p, const std::string& mode);

}  // namespace ks::rms_norm
