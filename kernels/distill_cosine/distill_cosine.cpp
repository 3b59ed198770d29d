// distill_cosine_loss's declaration, its parameters as the implementations read them, and its work
// counts; the reference and input generator are in reference.cpp, the `cpu` implementation in
// cpu.cpp, the CUDA ones in fused.cu and naive.cu.
#include "kernels/distill_cosine/distill_cosine.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace ks {
namespace distill {

Problem::Problem(const Parameters& p, bool generated_here)
    : tokens(p.get<std::int64_t>("tokens")),
      hidden(p.get<std::int64_t>("hidden")),
      vocab(p.get<std::int64_t>("vocab")),
      bf16(p.is("dtype", "bf16")),
      weight_hard_loss(p.get<double>("weight_hard_loss")),
      weight_soft_loss(p.get<double>("weight_soft_loss")),
      beta(p.get<double>("beta")),
      temperature(p.get<double>("temperature")),
      ignore_index(p.get<std::int64_t>("ignore_index")),
      chunk_size(p.is("chunk_size", "auto") ? 0 : p.get<std::int64_t>("chunk_size")),
      bias(p.get<bool>("bias")),
      normalize(p.is("normalize", "valid_tokens") ? Normalize::valid_tokens : Normalize::tokens),
      ignored_fraction(p.get<double>("ignored_fraction")),
      seed(p.get<std::uint64_t>("seed")) {
  if (generated_here && p.is("inputs", "torch_rand"))
    throw std::invalid_argument(
        "distill_cosine_loss: inputs torch_rand is drawn by torch's generator: only the Python implementations "
        "(torch, liger) reproduce it");
}

double loss_divisor(const Problem& p, std::int64_t labelled) {
  if (p.normalize == Normalize::tokens) return static_cast<double>(p.tokens);
  return static_cast<double>(std::max<std::int64_t>(labelled, 1));
}

namespace {

double gradient_elements(const Problem& p) {
  return static_cast<double>(p.tokens) * p.student_hidden() + static_cast<double>(p.vocab) * p.student_hidden() +
         (p.bias ? static_cast<double>(p.vocab) : 0.0);
}

// Inputs, weights, biases (in dtype) and int64 targets, read once.
double input_bytes(const Problem& p) {
  const double bt = static_cast<double>(p.tokens), v = static_cast<double>(p.vocab);
  const double h = static_cast<double>(p.hidden), hs = static_cast<double>(p.student_hidden());
  const double values = bt * hs + v * hs + bt * h + v * h + (p.bias ? 2 * v : 0);
  return static_cast<double>(p.element_size()) * values + 8.0 * bt;
}

}  // namespace

Work work(const Problem& p, const std::string& mode) {
  const double logits = static_cast<double>(p.tokens) * static_cast<double>(p.vocab);
  const double h = static_cast<double>(p.hidden), hs = static_cast<double>(p.student_hidden());
  const double gradients = static_cast<double>(p.element_size()) * gradient_elements(p);
  // The student and teacher logits; forward adds dXs = dZ·Ws and dWs = dZᵀ·Xs and writes the
  // gradients. Backward scales the stored gradients by the incoming gradient only where it is not 1,
  // as Liger does; the incoming gradient of a loss is 1, so every implementation skips it: backward
  // does no work (its points are flagged no-work), and full is forward's work.
  if (mode == "forward" || mode == "full") return {2.0 * logits * (hs + h + hs + hs), input_bytes(p) + gradients};
  if (mode == "no-grad-forward") return {2.0 * logits * (hs + h), input_bytes(p)};
  if (mode == "backward") return {0.0, 0.0};
  throw std::invalid_argument("distill_cosine_loss: unknown mode " + mode);
}

}  // namespace distill

KS_KERNEL(distill_cosine_loss, "Chunked distillation cosine loss",
          "Liger's fused linear cosine-similarity distillation loss (LigerFusedLinearCosineSimilarityFunction): "
          "student and teacher logits, hard cross-entropy loss plus beta·(1 − cos) soft loss, student gradients") {
  kernel.integer("tokens", 1024, "tokens BT (batch × sequence)").min(1);
  kernel.integer("hidden", 4096, "teacher hidden size H (even); the student's is H/2").min(2);
  kernel.integer("vocab", 128256, "vocabulary size V").min(1);
  kernel.choice("dtype", "bf16", {"bf16", "fp32"}, "dtype of inputs and weights");
  kernel.number("weight_hard_loss", 0.5, "weight of the hard (cross-entropy) loss").min(0);
  kernel.number("weight_soft_loss", 0.5, "weight of the soft (cosine) loss").min(0);
  kernel.number("beta", 0.5, "factor of the cosine loss").min(0);
  kernel.number("temperature", 1.0, "temperature dividing the logits of the soft loss").min(1e-6);
  kernel.integer("ignore_index", -100, "target value of tokens without a label");
  kernel.integer("chunk_size", 1024, "tokens per chunk, or auto").min(1).also("auto");
  kernel.boolean("bias", false, "student and teacher biases");
  kernel.choice("normalize", "tokens", {"tokens", "valid_tokens"},
                "divide the loss by all tokens (as Liger's benchmark does) or by the labelled ones");
  kernel.number("ignored_fraction", 0.0, "share of targets set to ignore_index").min(0).max(1);
  declare_drawn_inputs(kernel, "the inputs",
                       "Liger's benchmark's draw after torch.manual_seed(seed): the Python implementations only");
  kernel.modes({"forward", "backward", "full", "no-grad-forward"});
  kernel.validate([](const Parameters& p) -> std::optional<std::string> {
    if (const auto hidden = p.get<std::int64_t>("hidden"); hidden % 2 != 0)
      return fmt::format("hidden: must be even (the student's hidden size is hidden/2), got {}", hidden);
    return std::nullopt;
  });
  kernel.work([](const Parameters& p, const std::string& mode) {
    return distill::work(distill::Problem::of_any_draw(p), mode);
  });
}

}  // namespace ks
