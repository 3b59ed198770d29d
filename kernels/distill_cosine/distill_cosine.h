#pragma once
// Liger's chunked distillation cosine loss (LigerFusedLinearCosineSimilarityFunction, mid-2025).
// kernels/distill_cosine/README.md states the semantics with the formulas. This header is the
// contract between the kernel's parts: parameters, the deterministic input generator that host and
// device share, the CPU reference, and the CUDA implementations' factories.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.h"

namespace ks::distill {

struct Params {
  std::int64_t tokens = 1024;      // BT
  std::int64_t hidden = 4096;      // teacher hidden H; the student's is H/2
  std::int64_t vocab = 128256;     // V
  std::string dtype = "bf16";      // bf16 or fp32 (inputs and weights)
  double weight_hard_loss = 0.5;
  double weight_soft_loss = 0.5;
  double beta = 0.5;
  double temperature = 1.0;
  std::int64_t ignore_index = -100;
  std::int64_t chunk_size = 1024;  // tokens per chunk; 0 = auto (the fastest within the memory goal)
  bool bias = false;
  std::string normalize = "tokens";  // tokens (divide by BT, the seed's behaviour) or valid_tokens
  double ignored_fraction = 0.0;   // share of targets set to ignore_index (tests use it)
  std::uint64_t seed = 0;

  std::int64_t student_hidden() const { return hidden / 2; }
};

Params params_from_json(const Json& j);

// Inputs as Liger's benchmark makes them: inputs uniform in [0,1), weights and biases uniform in
// ±1/sqrt(fan_in), targets uniform in [0,V). Every value is a pure function of (seed, tensor, index)
// through counter_uniform, so the GPU generates the same tensors on the device.
enum Tensor : std::uint64_t { kStudentInput = 1, kStudentWeight = 2, kTeacherInput = 3, kTeacherWeight = 4,
                              kStudentBias = 5, kTeacherBias = 6, kTargets = 7, kIgnored = 8 };

// splitmix64 of (seed, tensor, index) -> uniform float in [0,1) with 24 random bits. Host and
// device compile the same integer code, so the values agree bit for bit.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline float counter_uniform(std::uint64_t seed, std::uint64_t tensor, std::uint64_t index) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + tensor * 0xD1B54A32D192ED03ull + index;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z = z ^ (z >> 31);
  return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
}

// Host copies of the inputs, already rounded to dtype (bf16 values held as float).
struct Inputs {
  std::vector<float> xs, ws, xt, wt, bs, bt;  // row-major: xs BT×H/2, ws V×H/2, xt BT×H, wt V×H
  std::vector<std::int64_t> targets;          // BT
};
Inputs make_inputs(const Params& p);

struct Result {
  double loss = 0;
  std::vector<double> grad_xs;  // BT×H/2
  std::vector<double> grad_ws;  // V×H/2
  std::vector<double> grad_bs;  // V (empty without bias)
};

// Straightforward double-precision loops: the reference every implementation is checked against.
Result reference(const Params& p, const Inputs& in);

// Relative error ‖a − b‖ / ‖b‖.
double relative_error(const std::vector<double>& a, const std::vector<double>& b);

// The CUDA implementations (kernels/distill_cosine/*.cu); they throw when built without CUDA.
std::unique_ptr<Instance> make_fused_instance(const Params& p);
std::unique_ptr<Instance> make_naive_instance(const Params& p);

// FLOPs of one pass: the four matrix products for forward and full (2·BT·V·(H/2 + H + H/2 + H/2)),
// two for no-grad-forward, the gradient scaling for backward.
double flops(const Params& p, const std::string& mode);
double bytes(const Params& p, const std::string& mode);

}  // namespace ks::distill
