// distill_cosine's schema, parameters and work counts; the reference and input generator are in
// reference.cpp, the `cpu` implementation in cpu.cpp, the CUDA ones in the .cu files.
#include "kernels/distill_cosine/distill_cosine.h"

#include <stdexcept>

#include <fmt/format.h>

namespace ks {
namespace distill {

// Defined in cpu.cpp: the float, chunked, multi-threaded implementation.
std::unique_ptr<Instance> make_cpu_instance(const Params& p);

namespace {

ParamSpec param(std::string name, ParamType type, Json default_value, std::string help) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.type = type;
  spec.default_value = std::move(default_value);
  spec.help = std::move(help);
  return spec;
}

ParamSpec bounded(ParamSpec spec, std::optional<double> min, std::optional<double> max = std::nullopt) {
  spec.min = min;
  spec.max = max;
  return spec;
}

ParamSpec one_of(ParamSpec spec, std::vector<Json> allowed) {
  spec.allowed = std::move(allowed);
  return spec;
}

std::vector<ParamSpec> parameters() {
  using T = ParamType;
  ParamSpec chunk_size = bounded(param("chunk_size", T::integer, 1024, "tokens per chunk, or auto"), 1);
  chunk_size.special = {"auto"};
  return {
      bounded(param("tokens", T::integer, 1024, "tokens BT (batch × sequence)"), 1),
      bounded(param("hidden", T::integer, 4096, "teacher hidden size H (even); the student's is H/2"), 2),
      bounded(param("vocab", T::integer, 128256, "vocabulary size V"), 1),
      one_of(param("dtype", T::string, "bf16", "dtype of inputs and weights"), {"bf16", "fp32"}),
      bounded(param("weight_hard_loss", T::number, 0.5, "weight of the hard (cross-entropy) loss"), 0),
      bounded(param("weight_soft_loss", T::number, 0.5, "weight of the soft (cosine) loss"), 0),
      bounded(param("beta", T::number, 0.5, "factor of the cosine loss"), 0),
      bounded(param("temperature", T::number, 1.0, "temperature dividing the logits of the soft loss"), 1e-6),
      param("ignore_index", T::integer, -100, "target value of tokens without a label"),
      chunk_size,
      param("bias", T::boolean, false, "student and teacher biases"),
      one_of(param("normalize", T::string, "tokens",
                   "divide the loss by all tokens (the seed's behaviour) or by the labelled ones"),
             {"tokens", "valid_tokens"}),
      bounded(param("ignored_fraction", T::number, 0.0, "share of targets set to ignore_index"), 0, 1),
      bounded(param("seed", T::integer, 0, "seed of the generated inputs"), 0),
  };
}

std::optional<std::string> validate(const Json& params) {
  if (params.contains("hidden") && params["hidden"].is_number_integer() && params["hidden"].get<std::int64_t>() % 2 != 0)
    return fmt::format("hidden: must be even (the student's hidden size is hidden/2), got {}",
                       params["hidden"].get<std::int64_t>());
  if (params.contains("chunk_size")) {
    const Json& chunk = params["chunk_size"];
    const bool ok = chunk.is_number_integer() ? chunk.get<std::int64_t>() >= 1 : chunk == Json("auto");
    if (!ok) return fmt::format("chunk_size: expected an integer ≥ 1 or \"auto\", got {}", chunk.dump());
  }
  return std::nullopt;
}

double gradient_elements(const Params& p) {
  return static_cast<double>(p.tokens) * p.student_hidden() + static_cast<double>(p.vocab) * p.student_hidden() +
         (p.bias ? static_cast<double>(p.vocab) : 0.0);
}

double element_size(const Params& p) { return p.dtype == "bf16" ? 2.0 : 4.0; }

// Inputs, weights, biases (in dtype) and int64 targets, read once.
double input_bytes(const Params& p) {
  const double bt = static_cast<double>(p.tokens), v = static_cast<double>(p.vocab);
  const double h = static_cast<double>(p.hidden), hs = static_cast<double>(p.student_hidden());
  const double values = bt * hs + v * hs + bt * h + v * h + (p.bias ? 2 * v : 0);
  return element_size(p) * values + 8.0 * bt;
}

}  // namespace

Params params_from_json(const Json& j) {
  Params p;
  p.tokens = j.at("tokens").get<std::int64_t>();
  p.hidden = j.at("hidden").get<std::int64_t>();
  p.vocab = j.at("vocab").get<std::int64_t>();
  p.dtype = j.at("dtype").get<std::string>();
  p.weight_hard_loss = j.at("weight_hard_loss").get<double>();
  p.weight_soft_loss = j.at("weight_soft_loss").get<double>();
  p.beta = j.at("beta").get<double>();
  p.temperature = j.at("temperature").get<double>();
  p.ignore_index = j.at("ignore_index").get<std::int64_t>();
  const Json& chunk = j.at("chunk_size");
  p.chunk_size = chunk.is_string() ? 0 : chunk.get<std::int64_t>();
  if (chunk.is_string() && chunk.get<std::string>() != "auto")
    throw std::invalid_argument("distill_cosine: chunk_size: expected an integer or \"auto\", got " + chunk.dump());
  p.bias = j.at("bias").get<bool>();
  p.normalize = j.at("normalize").get<std::string>();
  p.ignored_fraction = j.at("ignored_fraction").get<double>();
  p.seed = j.at("seed").get<std::uint64_t>();
  if (auto problem = validate(j)) throw std::invalid_argument("distill_cosine: " + *problem);
  if (p.tokens < 1 || p.vocab < 1 || p.hidden < 2)
    throw std::invalid_argument(fmt::format("distill_cosine: tokens, vocab ≥ 1 and hidden ≥ 2 expected, got {}, {}, {}",
                                            p.tokens, p.vocab, p.hidden));
  if (p.dtype != "bf16" && p.dtype != "fp32")
    throw std::invalid_argument("distill_cosine: dtype: expected bf16 or fp32, got " + p.dtype);
  if (p.normalize != "tokens" && p.normalize != "valid_tokens")
    throw std::invalid_argument("distill_cosine: normalize: expected tokens or valid_tokens, got " + p.normalize);
  if (!(p.temperature > 0)) throw std::invalid_argument(fmt::format("distill_cosine: temperature: must be > 0, got {}", p.temperature));
  return p;
}

double flops(const Params& p, const std::string& mode) {
  const double logits = static_cast<double>(p.tokens) * static_cast<double>(p.vocab);
  const double h = static_cast<double>(p.hidden), hs = static_cast<double>(p.student_hidden());
  // The student and teacher logits; forward adds dXs = dZ·Ws and dWs = dZᵀ·Xs.
  if (mode == "forward" || mode == "full") return 2.0 * logits * (hs + h + hs + hs);
  if (mode == "no-grad-forward") return 2.0 * logits * (hs + h);
  if (mode == "backward") return gradient_elements(p);  // one multiply per stored gradient element
  throw std::invalid_argument("distill_cosine: unknown mode: " + mode);
}

double bytes(const Params& p, const std::string& mode) {
  const double gradients = element_size(p) * gradient_elements(p);
  if (mode == "no-grad-forward") return input_bytes(p);
  if (mode == "forward") return input_bytes(p) + gradients;
  if (mode == "backward") return 2.0 * gradients;  // read and written again
  if (mode == "full") return input_bytes(p) + 3.0 * gradients;
  throw std::invalid_argument("distill_cosine: unknown mode: " + mode);
}

}  // namespace distill

KernelSpec make_distill_cosine_kernel() {
  KernelSpec spec;
  spec.name = "distill_cosine_loss";
  spec.title = "Chunked distillation cosine loss";
  spec.description =
      "Liger's fused linear cosine-similarity distillation loss (LigerFusedLinearCosineSimilarityFunction): "
      "student and teacher logits, hard cross-entropy loss plus beta·(1 − cos) soft loss, student gradients";
  spec.parameters = distill::parameters();
  spec.modes = {"forward", "backward", "full", "no-grad-forward"};
  spec.implementations = {
      {"fused", Backend::cuda, "chunked over tokens, cuBLASLt products and one fused row kernel"},
      {"naive", Backend::cuda, "unchunked fp32 logits, one step per operation, as PyTorch eager"},
      {"cpu", Backend::cpu, "float, chunked over tokens, multi-threaded"},
  };
  spec.validate = distill::validate;
  spec.instantiate = [](const std::string& implementation, const Json& params) -> std::unique_ptr<Instance> {
    const distill::Params p = distill::params_from_json(params);
    if (implementation == "cpu") return distill::make_cpu_instance(p);
    if (implementation == "fused") return distill::make_fused_instance(p);
    if (implementation == "naive") return distill::make_naive_instance(p);
    throw std::invalid_argument("distill_cosine: unknown implementation: " + implementation);
  };
  return spec;
}

}  // namespace ks
