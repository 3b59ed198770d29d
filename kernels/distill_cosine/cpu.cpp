// distill_cosine's `cpu` implementation: float products, chunked over tokens as Liger chunks them,
// the rows of a chunk spread over the hardware threads. Its formulas are written out again here
// rather than shared with reference.cpp, so that the check compares two independent codes.
#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "kernels/common/cpu.h"
#include "kernels/distill_cosine/distill_cosine.h"

namespace ks::distill {
namespace {

constexpr float kNormalizeEps = 1e-12f;  // F.normalize
constexpr float kCosineEps = 1e-8f;      // F.cosine_similarity
// Rows computed together, so each weight row loaded from memory serves this many tokens.
constexpr std::int64_t kRowGroup = 4;
// chunk_size auto: as many tokens as keep a chunk's float logits within this size.
constexpr std::int64_t kAutoChunkBytes = 64ll << 20;
// Above this tokens·vocab·hidden, check() compares at a reduced shape (the double reference is slow).
constexpr double kFullCheckLimit = 268435456.0;  // 2^28
constexpr double kLossTolerance = 2e-3, kGradientTolerance = 2e-2;

// Token ranges as Liger makes them: max(1, BT / chunk_size) chunks by torch.chunk, so every chunk
// but the last has ceil(BT / chunks) tokens.
std::vector<std::pair<std::int64_t, std::int64_t>> token_chunks(const Problem& p) {
  const std::int64_t chunk_size =
      p.chunk_size > 0 ? p.chunk_size : std::max<std::int64_t>(1, kAutoChunkBytes / (4 * p.vocab));
  const std::int64_t count = std::max<std::int64_t>(1, p.tokens / chunk_size);
  const std::int64_t length = (p.tokens + count - 1) / count;
  std::vector<std::pair<std::int64_t, std::int64_t>> chunks;
  for (std::int64_t begin = 0; begin < p.tokens; begin += length)
    chunks.emplace_back(begin, std::min(begin + length, p.tokens));
  return chunks;
}

// Eight independent partial sums: the compiler may not reorder one float sum, but it vectorises these.
float dot(const float* a, const float* b, std::int64_t n) {
  constexpr std::int64_t kLanes = 8;
  float partial[kLanes] = {};
  std::int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (std::int64_t lane = 0; lane < kLanes; ++lane) partial[lane] += a[k + lane] * b[k + lane];
  float sum = 0;
  for (; k < n; ++k) sum += a[k] * b[k];
  for (float p : partial) sum += p;
  return sum;
}

// Statistics of one token's rows of logits and the loss they give.
struct RowStats {
  float max = 0, log_sum_exp = 0;
  double s_norm = 0, t_norm = 0, s_dot_t = 0;  // of the tempered logits s/T and t/T
};

class CpuDistill final : public Instance {
 public:
  explicit CpuDistill(const Problem& p) : p_(p), in_(make_inputs(p)) {
    const std::int64_t labelled =
        std::count_if(in_.targets.begin(), in_.targets.end(), [&](std::int64_t y) { return y != p_.ignore_index; });
    divisor_ = loss_divisor(p_, labelled);
    for (std::int64_t y : in_.targets)
      if (y != p_.ignore_index && (y < 0 || y >= p_.vocab))
        throw std::out_of_range(fmt::format("distill_cosine_loss: target {} outside [0, {})", y, p_.vocab));
  }

  BoundMode bind(const std::string& mode) override {
    // backward scales the gradients a forward pass stored.
    if (mode == "backward" && !has_gradients_) forward(true);
    return {call_of_mode(
                mode, [this](bool with_gradients) { forward(with_gradients); }, [this] { backward(); }),
            [this, mode] { return check(mode); }};
  }

 private:
  CheckResult check(const std::string& mode) {
    const double size = static_cast<double>(p_.tokens) * static_cast<double>(p_.vocab) * static_cast<double>(p_.hidden);
    if (size <= kFullCheckLimit) return compare_with_reference(mode, "");
    // The same parameters at a shape the double reference computes in seconds.
    Problem reduced = p_;
    reduced.tokens = std::min<std::int64_t>(p_.tokens, 128);
    reduced.hidden = std::min<std::int64_t>(p_.hidden, 512);
    reduced.vocab = std::min<std::int64_t>(p_.vocab, 4093);
    CpuDistill small(reduced);
    return small.compare_with_reference(mode, " (reduced shape)");
  }

  // Runs `mode` and compares the loss and (for modes that produce them) the gradients with reference().
  CheckResult compare_with_reference(const std::string& mode, const std::string& note) {
    bind(mode).run();
    const Result ref = reference(p_, in_);
    const double loss_error = std::fabs(loss_ - ref.loss) / std::max(std::fabs(ref.loss), 1e-30);
    CheckResult result{
        loss_error <= kLossTolerance,  // false for NaN
        fmt::format("distill_cosine_loss cpu {} at tokens {} hidden {} vocab {}{}: loss {:.9g} vs {:.9g} (rel {:.2e})",
                    mode, p_.tokens, p_.hidden, p_.vocab, note, loss_, ref.loss, loss_error)};
    if (mode == "no-grad-forward") return result;
    const auto widen = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
    const double errors[] = {relative_error(widen(grad_xs_), ref.grad_xs), relative_error(widen(grad_ws_), ref.grad_ws),
                             p_.bias ? relative_error(widen(grad_bs_), ref.grad_bs) : 0.0};
    for (double e : errors) result.passed = result.passed && e <= kGradientTolerance;
    result.detail += fmt::format("; gradients rel ‖out−ref‖/‖ref‖: xs {:.2e}, ws {:.2e}", errors[0], errors[1]);
    if (p_.bias) result.detail += fmt::format(", bs {:.2e}", errors[2]);
    return result;
  }

  // Liger's chunked forward: the loss and, with gradients, dXs, dWs and dbs.
  void forward(bool with_gradients) {
    const std::int64_t hs = p_.student_hidden();
    if (with_gradients) {
      grad_xs_.assign(static_cast<std::size_t>(p_.tokens * hs), 0.0f);
      grad_ws_.assign(static_cast<std::size_t>(p_.vocab * hs), 0.0f);
      grad_bs_.assign(p_.bias ? static_cast<std::size_t>(p_.vocab) : 0, 0.0f);
    }
    double loss = 0;
    for (const auto& [begin, end] : token_chunks(p_)) loss += chunk(begin, end, with_gradients);
    loss_ = loss;
    has_gradients_ = has_gradients_ || with_gradients;
  }

  // Liger's backward: the stored gradients times the incoming gradient, skipped when it is 1 (the
  // benchmark's case) exactly as Liger skips it.
  void backward() {
    if (grad_output_ == 1.0f) return;
    for (auto* gradient : {&grad_xs_, &grad_ws_, &grad_bs_})
      for (float& g : *gradient) g *= grad_output_;
  }

  // One chunk of tokens [begin, end): returns its share of the loss; adds its gradients.
  double chunk(std::int64_t begin, std::int64_t end, bool with_gradients) {
    const std::int64_t rows = end - begin;
    logits_.resize(static_cast<std::size_t>(rows * p_.vocab));
    const std::int64_t groups = (rows + kRowGroup - 1) / kRowGroup;
    std::vector<double> group_loss(static_cast<std::size_t>(groups), 0.0);
    parallel_for(groups, [&](std::int64_t first, std::int64_t last) {
      std::vector<float> teacher(static_cast<std::size_t>(kRowGroup * p_.vocab));
      for (std::int64_t g = first; g < last; ++g) {
        const std::int64_t row0 = begin + g * kRowGroup, row1 = std::min(row0 + kRowGroup, end);
        group_loss[static_cast<std::size_t>(g)] = row_group(begin, row0, row1, teacher.data(), with_gradients);
      }
    });
    if (with_gradients)
      parallel_for(p_.vocab, [&](std::int64_t v0, std::int64_t v1) { weight_gradient(begin, end, v0, v1); });
    double loss = 0;
    for (double l : group_loss) loss += l;
    return loss;
  }

  // Rows [row0, row1) of the chunk starting at `begin`: logits, loss, and (with gradients) the
  // gradient of the logits in place of the student logits, and dXs.
  double row_group(std::int64_t begin, std::int64_t row0, std::int64_t row1, float* teacher, bool with_gradients) {
    const std::int64_t hs = p_.student_hidden(), h = p_.hidden, vocab = p_.vocab;
    float* student = logits_.data() + (row0 - begin) * vocab;
    for (std::int64_t v = 0; v < vocab; ++v) {
      const float* ws_row = in_.ws.data() + v * hs;
      const float* wt_row = in_.wt.data() + v * h;
      for (std::int64_t r = 0; r < row1 - row0; ++r) {
        student[r * vocab + v] = dot(in_.xs.data() + (row0 + r) * hs, ws_row, hs) + (p_.bias ? in_.bs[v] : 0.0f);
        teacher[r * vocab + v] = dot(in_.xt.data() + (row0 + r) * h, wt_row, h) + (p_.bias ? in_.bt[v] : 0.0f);
      }
    }
    double loss = 0;
    for (std::int64_t r = 0; r < row1 - row0; ++r)
      loss += row_loss(row0 + r, student + r * vocab, teacher + r * vocab, with_gradients);
    if (with_gradients) input_gradient(row0, row1, student);
    return loss;
  }

  RowStats stats(const float* s, const float* t) const {
    RowStats st;
    const auto inv_t = static_cast<float>(1.0 / p_.temperature);
    st.max = *std::max_element(s, s + p_.vocab);
    double sum_exp = 0;
    for (std::int64_t j = 0; j < p_.vocab; ++j) {
      sum_exp += std::exp(s[j] - st.max);
      const double u = s[j] * inv_t, w = t[j] * inv_t;
      st.s_norm += u * u;
      st.t_norm += w * w;
      st.s_dot_t += u * w;
    }
    st.log_sum_exp = st.max + static_cast<float>(std::log(sum_exp));
    st.s_norm = std::sqrt(st.s_norm);
    st.t_norm = std::sqrt(st.t_norm);
    return st;
  }

  // One token's loss (already weighted and divided); with gradients, s is overwritten by dL/ds:
  //   w_hard/N · (softmax(s) − onehot(y))  −  w_soft·β/N · d cos(s/T, t/T)/ds.
  double row_loss(std::int64_t token, float* s, const float* t, bool with_gradients) {
    const RowStats st = stats(s, t);
    const std::int64_t target = in_.targets[static_cast<std::size_t>(token)];
    const bool labelled = target != p_.ignore_index;
    // F.normalize's divisors, then F.cosine_similarity's on the normalised rows (whose norms are 1
    // unless a row was below the normalisation eps).
    const double s_div = std::max(st.s_norm, static_cast<double>(kNormalizeEps));
    const double t_div = std::max(st.t_norm, static_cast<double>(kNormalizeEps));
    const double a_norm = st.s_norm / s_div, b_norm = st.t_norm / t_div;
    const double a_div = std::max(a_norm, static_cast<double>(kCosineEps)),
                 b_div = std::max(b_norm, static_cast<double>(kCosineEps));
    const double a_dot_b = st.s_dot_t / (s_div * t_div);
    const double cosine = a_dot_b / (a_div * b_div);
    const double hard_scale = p_.weight_hard_loss / divisor_, soft_scale = p_.weight_soft_loss * p_.beta / divisor_;
    const double loss = (labelled ? hard_scale * (st.log_sum_exp - s[target]) : 0.0) + soft_scale * (1.0 - cosine);
    if (!with_gradients) return loss;

    // d cos/d a = b/(|a||b|) − (a·b)/(|a|²|b|)·a/‖a‖; d a/d u = I/|u| − u uᵀ/(|u|²‖u‖) (the second
    // term only where the normalisation clamp does not hold); u = s/T.
    const double ga_b = 1.0 / (a_div * b_div * t_div);                                           // multiplies t/T
    const double ga_a = a_norm > 0 ? -a_dot_b / (a_div * a_div * b_div * a_norm * s_div) : 0.0;  // multiplies s/T
    const double grad_a_dot_u = ga_b * st.s_dot_t + ga_a * st.s_norm * st.s_norm;
    const double u_term = st.s_norm > kNormalizeEps ? grad_a_dot_u / (s_div * s_div * st.s_norm) : 0.0;
    const auto inv_t = 1.0 / p_.temperature;
    const auto c_t = static_cast<float>(-soft_scale * inv_t * ga_b / s_div * inv_t);
    const auto c_s = static_cast<float>(-soft_scale * inv_t * (ga_a / s_div - u_term) * inv_t);
    const auto h_scale = static_cast<float>(labelled ? hard_scale : 0.0);
    for (std::int64_t j = 0; j < p_.vocab; ++j) {
      const float softmax = std::exp(s[j] - st.log_sum_exp);
      s[j] = h_scale * softmax + c_s * s[j] + c_t * t[j];
    }
    if (labelled) s[target] -= h_scale;
    return loss;
  }

  // dXs[token] = Σ_v dL/ds[token, v] · Ws[v] for the tokens [row0, row1), whose dL/ds rows start at grad_s.
  void input_gradient(std::int64_t row0, std::int64_t row1, const float* grad_s) {
    const std::int64_t hs = p_.student_hidden();
    for (std::int64_t v = 0; v < p_.vocab; ++v) {
      const float* ws_row = in_.ws.data() + v * hs;
      for (std::int64_t r = 0; r < row1 - row0; ++r) {
        const float g = grad_s[r * p_.vocab + v];
        float* out = grad_xs_.data() + (row0 + r) * hs;
        for (std::int64_t k = 0; k < hs; ++k) out[k] += g * ws_row[k];
      }
    }
  }

  // dWs[v] += Σ_tokens dL/ds[token, v] · Xs[token] and dbs[v] += Σ dL/ds[token, v], for v in [v0, v1).
  void weight_gradient(std::int64_t begin, std::int64_t end, std::int64_t v0, std::int64_t v1) {
    const std::int64_t hs = p_.student_hidden();
    for (std::int64_t v = v0; v < v1; ++v) {
      float* out = grad_ws_.data() + v * hs;
      float bias = 0;
      for (std::int64_t token = begin; token < end; ++token) {
        const float g = logits_[static_cast<std::size_t>((token - begin) * p_.vocab + v)];
        const float* xs_row = in_.xs.data() + token * hs;
        for (std::int64_t k = 0; k < hs; ++k) out[k] += g * xs_row[k];
        bias += g;
      }
      if (p_.bias) grad_bs_[static_cast<std::size_t>(v)] += bias;
    }
  }

  Problem p_;
  Inputs in_;
  double divisor_ = 1;
  std::vector<float> logits_;  // one chunk's student logits, then their gradient
  std::vector<float> grad_xs_, grad_ws_, grad_bs_;
  double loss_ = 0;
  bool has_gradients_ = false;
  float grad_output_ = 1.0f;  // the incoming gradient of a loss that is the end of the graph
};

}  // namespace
}  // namespace ks::distill

KS_IMPLEMENTATION(distill_cosine_loss, cpu, cpu, "float, chunked over tokens, multi-threaded") {
  return std::make_unique<ks::distill::CpuDistill>(ks::distill::Problem(params));
}
