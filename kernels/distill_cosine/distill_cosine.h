#pragma once
// Liger's chunked distillation cosine loss (LigerFusedLinearCosineSimilarityFunction, mid-2025).
// kernels/distill_cosine/README.md states the semantics with the formulas. What the implementations
// share: the point read from its parameters, the deterministic input generator that host and device
// share, the double-precision reference, and the work counts.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/inputs.h"
#include "kernels/kernel.h"

namespace ks::distill {

enum class Normalize { tokens, valid_tokens };

// A point's parameters as the implementations use them (distill_cosine.cpp declares them).
struct Problem {
  std::int64_t tokens;  // BT
  std::int64_t hidden;  // teacher hidden H; the student's is H/2
  std::int64_t vocab;   // V
  bool bf16;            // bf16 inputs and weights; else fp32
  double weight_hard_loss, weight_soft_loss, beta, temperature;
  std::int64_t ignore_index;
  std::int64_t chunk_size;  // tokens per chunk; 0: auto
  bool bias;
  Normalize normalize;
  double ignored_fraction;  // share of targets set to ignore_index
  std::uint64_t seed;

  // The point as a C++ implementation runs it: throws std::invalid_argument when its inputs are
  // drawn by torch's generator (inputs: torch_rand), which only the Python implementations
  // reproduce; the C++ implementations generate the counter-based inputs alone.
  explicit Problem(const Parameters& p) : Problem(p, true) {}
  // Any point, whoever draws its inputs: what the work counts read.
  static Problem of_any_draw(const Parameters& p) { return Problem(p, false); }
  std::int64_t student_hidden() const { return hidden / 2; }
  std::size_t element_size() const { return bf16 ? 2 : 4; }

 private:
  Problem(const Parameters& p, bool generated_here);
};

// Inputs as Liger's benchmark makes them: inputs uniform in [0,1), weights and biases uniform in
// ±1/sqrt(fan_in), targets uniform in [0,V). Every value is a pure function of (seed, tensor, index)
// through ks::counter_uniform, so the GPU generates the same tensors on the device.
enum Tensor : std::uint64_t {
  kStudentInput = 1,
  kStudentWeight = 2,
  kTeacherInput = 3,
  kTeacherWeight = 4,
  kStudentBias = 5,
  kTeacherBias = 6,
  kTargets = 7,
  kIgnored = 8
};

// Host copies of the inputs, already rounded to dtype (bf16 values held as float).
struct Inputs {
  std::vector<float> xs, ws, xt, wt, bs, bt;  // row-major: xs BT×H/2, ws V×H/2, xt BT×H, wt V×H
  std::vector<std::int64_t> targets;          // BT
};
Inputs make_inputs(const Problem& p);

struct Result {
  double loss = 0;
  std::vector<double> grad_xs;  // BT×H/2
  std::vector<double> grad_ws;  // V×H/2
  std::vector<double> grad_bs;  // V (empty without bias)
};

// Straightforward double-precision loops: the reference every implementation is checked against.
Result reference(const Problem& p, const Inputs& in);

// The loss's divisor N: all tokens, or the labelled ones (at least 1).
double loss_divisor(const Problem& p, std::int64_t labelled);

// Relative error ‖a − b‖ / ‖b‖.
double relative_error(const std::vector<double>& a, const std::vector<double>& b);

// The call that runs `mode`, made of an implementation's forward pass (with gradients or without)
// and its backward: forward, no-grad-forward, backward, or full (forward, then backward). Throws
// std::invalid_argument on any other mode.
template <class Forward, class Backward>
std::function<void()> call_of_mode(const std::string& mode, Forward forward, Backward backward) {
  if (mode == "forward") return [forward] { forward(true); };
  if (mode == "no-grad-forward") return [forward] { forward(false); };
  if (mode == "backward") return [backward] { backward(); };
  if (mode == "full")
    return [forward, backward] {
      forward(true);
      backward();
    };
  throw std::invalid_argument("distill_cosine_loss: unknown mode " + mode);
}

// Work of one call: the four matrix products for forward and full (2·BT·V·(H/2 + H + H/2 + H/2)
// FLOPs), two for no-grad-forward, the gradient scaling for backward. Throws std::invalid_argument on
// an unknown mode.
Work work(const Problem& p, const std::string& mode);

}  // namespace ks::distill
