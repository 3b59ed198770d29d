// distill_cosine's input generator and its double-precision reference: straightforward loops over
// tokens and vocabulary, written for clarity, not speed. Every implementation is checked against
// reference(); the unit tests check reference()'s gradients against finite differences of its loss.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "kernels/common/bf16.h"
#include "kernels/distill_cosine/distill_cosine.h"

namespace ks::distill {
namespace {

// F.normalize's eps (a norm is clamped to at least this) and F.cosine_similarity's.
constexpr double kNormalizeEps = 1e-12;
constexpr double kCosineEps = 1e-8;

std::vector<float> uniform_tensor(const Problem& p, Tensor tensor, std::int64_t count) {
  std::vector<float> values(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    values[static_cast<std::size_t>(i)] = counter_uniform(p.seed, tensor, static_cast<std::uint64_t>(i));
  return values;
}

// nn.Linear's default initialisation: uniform in ±1/sqrt(fan_in), computed in float so the device
// generator (which runs the same expression) gets the same values.
std::vector<float> linear_tensor(const Problem& p, Tensor tensor, std::int64_t count, std::int64_t fan_in) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
  std::vector<float> values = uniform_tensor(p, tensor, count);
  for (float& v : values) v = (2.0f * v - 1.0f) * bound;
  return values;
}

void round_to_dtype(const Problem& p, std::vector<float>& values) {
  if (!p.bf16) return;
  for (float& v : values) v = round_to_bf16(v);
}

std::vector<std::int64_t> make_targets(const Problem& p) {
  std::vector<std::int64_t> targets(static_cast<std::size_t>(p.tokens));
  for (std::int64_t i = 0; i < p.tokens; ++i) {
    const auto index = static_cast<std::uint64_t>(i);
    const double u = counter_uniform(p.seed, kTargets, index);
    const auto target = std::min(static_cast<std::int64_t>(std::floor(u * static_cast<double>(p.vocab))), p.vocab - 1);
    const bool ignored = counter_uniform(p.seed, kIgnored, index) < p.ignored_fraction;
    targets[static_cast<std::size_t>(i)] = ignored ? p.ignore_index : target;
  }
  return targets;
}

bool is_labelled(const Problem& p, std::int64_t target) { return target != p.ignore_index; }

// The loss's divisor: all tokens (Liger of July 2025), or the labelled ones (later Liger).
double divisor_of(const Problem& p, const std::vector<std::int64_t>& targets) {
  const auto labelled =
      std::count_if(targets.begin(), targets.end(), [&](std::int64_t y) { return is_labelled(p, y); });
  return loss_divisor(p, labelled);
}

// One row of logits: x (n values) against every row of w (V×n), plus the bias when there is one.
std::vector<double> logits_row(const float* x, const std::vector<float>& w, const std::vector<float>& bias,
                               std::int64_t vocab, std::int64_t n) {
  std::vector<double> row(static_cast<std::size_t>(vocab));
  for (std::int64_t v = 0; v < vocab; ++v) {
    double dot = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(v)];
    for (std::int64_t k = 0; k < n; ++k) dot += static_cast<double>(x[k]) * w[static_cast<std::size_t>(v * n + k)];
    row[static_cast<std::size_t>(v)] = dot;
  }
  return row;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

double norm(const std::vector<double>& x) { return std::sqrt(dot(x, x)); }

std::vector<double> divided(const std::vector<double>& x, double divisor) {
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i] / divisor;
  return out;
}

// Hard loss of one labelled token, logsumexp(s) − s[y], and its gradient softmax(s) − onehot(y).
double hard_loss_row(const std::vector<double>& s, std::int64_t target, std::vector<double>& grad) {
  const double max = *std::max_element(s.begin(), s.end());
  double sum = 0;
  for (double v : s) sum += std::exp(v - max);
  const double lse = max + std::log(sum);
  for (std::size_t j = 0; j < s.size(); ++j) grad[j] = std::exp(s[j] - lse);
  grad[static_cast<std::size_t>(target)] -= 1.0;
  return lse - s[static_cast<std::size_t>(target)];
}

// cos(normalize(s/T), normalize(t/T)) as F.normalize then F.cosine_similarity compute it, and its
// gradient with respect to s, following autograd through both steps: F.normalize divides by
// max(‖u‖, 1e-12) (no gradient through the norm where the clamp holds); cosine_similarity divides by
// max(‖a‖, 1e-8), a clamp applied without autograd, so the gradient sees the plain norm.
double cosine_row(const std::vector<double>& s, const std::vector<double>& t, double temperature,
                  std::vector<double>& grad_s) {
  const std::size_t vocab = s.size();
  const std::vector<double> u = divided(s, temperature), w = divided(t, temperature);
  const double u_norm = norm(u), w_norm = norm(w);
  const double u_div = std::max(u_norm, kNormalizeEps), w_div = std::max(w_norm, kNormalizeEps);
  const std::vector<double> a = divided(u, u_div), b = divided(w, w_div);
  const double a_norm = norm(a), b_norm = norm(b);
  const double a_div = std::max(a_norm, kCosineEps), b_div = std::max(b_norm, kCosineEps);
  const double cosine = dot(a, b) / (a_div * b_div);

  // d cos / d a_j = b_j/(|a| |b|) − (a·b)/(|a|² |b|) · a_j/‖a‖
  std::vector<double> grad_a(vocab);
  const double a_norm_grad = a_norm > 0 ? 1.0 / a_norm : 0.0;
  const double a_dot_b = dot(a, b);
  for (std::size_t j = 0; j < vocab; ++j)
    grad_a[j] = b[j] / (a_div * b_div) - a_dot_b / (a_div * a_div * b_div) * a[j] * a_norm_grad;
  // d a_k / d u_j = δ_kj/|u| − u_k/|u|² · u_j/‖u‖, the second term only where the clamp does not hold
  const double u_norm_grad = u_norm > kNormalizeEps ? 1.0 / u_norm : 0.0;
  const double grad_a_dot_u = dot(grad_a, u);
  for (std::size_t j = 0; j < vocab; ++j) {
    const double grad_u = grad_a[j] / u_div - grad_a_dot_u / (u_div * u_div) * u[j] * u_norm_grad;
    grad_s[j] = grad_u / temperature;
  }
  return cosine;
}

}  // namespace

Inputs make_inputs(const Problem& p) {
  const std::int64_t hs = p.student_hidden();
  Inputs in;
  in.xs = uniform_tensor(p, kStudentInput, p.tokens * hs);
  in.ws = linear_tensor(p, kStudentWeight, p.vocab * hs, hs);
  in.xt = uniform_tensor(p, kTeacherInput, p.tokens * p.hidden);
  in.wt = linear_tensor(p, kTeacherWeight, p.vocab * p.hidden, p.hidden);
  if (p.bias) {
    in.bs = linear_tensor(p, kStudentBias, p.vocab, hs);
    in.bt = linear_tensor(p, kTeacherBias, p.vocab, p.hidden);
  }
  for (auto* tensor : {&in.xs, &in.ws, &in.xt, &in.wt, &in.bs, &in.bt}) round_to_dtype(p, *tensor);
  in.targets = make_targets(p);
  return in;
}

Result reference(const Problem& p, const Inputs& in) {
  const std::int64_t hs = p.student_hidden();
  const double divisor = divisor_of(p, in.targets);
  const double hard_scale = p.weight_hard_loss / divisor;
  const double soft_scale = p.weight_soft_loss * p.beta / divisor;
  Result result;
  result.grad_xs.assign(static_cast<std::size_t>(p.tokens * hs), 0.0);
  result.grad_ws.assign(static_cast<std::size_t>(p.vocab * hs), 0.0);
  if (p.bias) result.grad_bs.assign(static_cast<std::size_t>(p.vocab), 0.0);

  double hard = 0, soft = 0;
  std::vector<double> grad_hard(static_cast<std::size_t>(p.vocab)), grad_cos(static_cast<std::size_t>(p.vocab));
  for (std::int64_t i = 0; i < p.tokens; ++i) {
    const float* xs_row = in.xs.data() + i * hs;
    const std::vector<double> s = logits_row(xs_row, in.ws, in.bs, p.vocab, hs);
    const std::vector<double> t = logits_row(in.xt.data() + i * p.hidden, in.wt, in.bt, p.vocab, p.hidden);

    const std::int64_t target = in.targets[static_cast<std::size_t>(i)];
    const bool labelled = is_labelled(p, target);
    if (labelled && (target < 0 || target >= p.vocab))
      throw std::out_of_range(
          fmt::format("distill_cosine: target {} of token {} is outside [0, {})", target, i, p.vocab));
    if (labelled) hard += hard_loss_row(s, target, grad_hard);
    soft += 1.0 - cosine_row(s, t, p.temperature, grad_cos);

    // dL/ds = w_hard/N · d hard/ds − w_soft·β/N · d cos/ds; then the student's linear layer.
    for (std::int64_t v = 0; v < p.vocab; ++v) {
      const auto j = static_cast<std::size_t>(v);
      const double g = (labelled ? hard_scale * grad_hard[j] : 0.0) - soft_scale * grad_cos[j];
      for (std::int64_t k = 0; k < hs; ++k) {
        result.grad_xs[static_cast<std::size_t>(i * hs + k)] += g * in.ws[static_cast<std::size_t>(v * hs + k)];
        result.grad_ws[static_cast<std::size_t>(v * hs + k)] += g * xs_row[k];
      }
      if (p.bias) result.grad_bs[j] += g;
    }
  }
  result.loss = p.weight_hard_loss * hard / divisor + p.weight_soft_loss * p.beta * soft / divisor;
  return result;
}

double relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size())
    throw std::invalid_argument(fmt::format("relative_error: sizes differ ({} vs {})", a.size(), b.size()));
  double diff = 0, ref = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    ref += b[i] * b[i];
  }
  // NaN anywhere makes the error NaN, which no tolerance accepts; a zero reference leaves the
  // absolute error.
  return ref > 0 ? std::sqrt(diff / ref) : std::sqrt(diff);
}

}  // namespace ks::distill
