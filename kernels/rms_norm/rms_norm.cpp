// rms_norm's declaration, its CPU implementation, and the float64 reference that checks both
// implementations; the CUDA implementation is in cuda.cu.
#include "kernels/rms_norm/rms_norm.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "kernels/common/cpu.h"

namespace ks::rms_norm {
namespace {

// Rows of backward's dw partial sums: a fixed count, so dw is the same whatever the thread count.
constexpr std::int64_t kDwChunks = 64;
// Elements a thread should have at least, for a thread to be worth starting.
constexpr std::int64_t kMinElementsPerThread = 1 << 14;

std::int64_t min_rows_per_thread(const Problem& p) {
  return std::max<std::int64_t>(1, kMinElementsPerThread / p.hidden);
}

// Error allowed by check(). A bf16 rounding is off by at most u = 2^-8 of its value, and an output
// carries up to 5.5 u of them relative to its scale: none's dx, whose rstd is rounded twice (0.5 u
// from the rounded sum of squares, u when saved) and enters cubed, then dx is rounded; llama's dw,
// y and the other modes carry 2 to 3 u. fp32 results carry their fp32 sums' rounding.
double tolerance(const Problem& p) { return p.bf16 ? 6.0 / 256 : 1e-4; }

// The largest error seen, and where.
struct Worst {
  double error = -1, got = 0, exact = 0;
  std::string where = "-";
  void see(const char* tensor, std::int64_t index, double value, double exact_value, double scale) {
    // A NaN compares false with everything, so it is caught explicitly.
    const double e = std::isfinite(value) ? std::fabs(value - exact_value) / std::max(scale, 1e-30)
                                          : std::numeric_limits<double>::infinity();
    if (e > error) error = e, got = value, exact = exact_value, where = fmt::format("{}[{}]", tensor, index);
  }
};

}  // namespace

Problem::Problem(const Parameters& p)
    : tokens(p.get<std::int64_t>("tokens")),
      hidden(p.get<std::int64_t>("hidden")),
      bf16(p.is("dtype", "bf16")),
      casting(Casting(p.is("casting_mode", "gemma") + 2 * p.is("casting_mode", "none"))),  // else llama
      eps(static_cast<float>(p.get<double>("eps"))),
      offset(static_cast<float>(p.get<double>("offset"))),
      seed(p.get<std::uint64_t>("seed")) {}

std::string Problem::describe() const {
  static const char* const names[] = {"llama", "gemma", "none"};
  return fmt::format("{}x{} {} {}", tokens, hidden, bf16 ? "bf16" : "fp32", names[static_cast<int>(casting)]);
}

Tensors make_inputs(const Problem& p) {
  const auto n = static_cast<std::size_t>(p.tokens * p.hidden), h = static_cast<std::size_t>(p.hidden);
  Tensors t;
  t.x.resize(n), t.dy.resize(n), t.w.resize(h);
  parallel_for(
      static_cast<std::int64_t>(n),
      [&](std::int64_t begin, std::int64_t end) {
        for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i)
          t.x[i] = p.input(kX, i), t.dy[i] = p.input(kDy, i);
      },
      kMinElementsPerThread);
  for (std::size_t i = 0; i < h; ++i) t.w[i] = p.input(kW, i);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  t.y.assign(n, nan), t.dx.assign(n, nan), t.rstd.assign(static_cast<std::size_t>(p.tokens), nan), t.dw.assign(h, nan);
  return t;
}

void forward(const Problem& p, Tensors& t) {
  const std::int64_t h = p.hidden;
  parallel_for(
      p.tokens,
      [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t row = begin; row < end; ++row) {
          const float* x = t.x.data() + row * h;
          float* y = t.y.data() + row * h;
          float sum = 0;
          for (std::int64_t i = 0; i < h; ++i) sum += p.square(x[i]);
          const float rstd = p.rstd(sum);
          t.rstd[static_cast<std::size_t>(row)] = p.saved(rstd);
          for (std::int64_t i = 0; i < h; ++i) y[i] = p.y(x[i], t.w[static_cast<std::size_t>(i)], rstd);
        }
      },
      min_rows_per_thread(p));
}

void backward(const Problem& p, Tensors& t) {
  const std::int64_t h = p.hidden, chunks = std::min(p.tokens, kDwChunks);
  // dw: one fp32 partial sum per chunk of rows, then the partials summed in chunk order.
  std::vector<float> partial(static_cast<std::size_t>(chunks * h), 0.0f);
  parallel_for(
      chunks,
      [&](std::int64_t chunk_begin, std::int64_t chunk_end) {
        for (std::int64_t chunk = chunk_begin; chunk < chunk_end; ++chunk) {
          float* acc = partial.data() + chunk * h;
          for (std::int64_t row = p.tokens * chunk / chunks; row < p.tokens * (chunk + 1) / chunks; ++row) {
            const float *x = t.x.data() + row * h, *dy = t.dy.data() + row * h, *w = t.w.data();
            float* dx = t.dx.data() + row * h;
            const float rstd = t.rstd[static_cast<std::size_t>(row)];
            float dot = 0;
            for (std::int64_t i = 0; i < h; ++i) dot += p.m(dy[i], w[i]) * x[i];
            const float c = p.c(rstd, dot);
            for (std::int64_t i = 0; i < h; ++i) {
              dx[i] = p.dx(x[i], p.m(dy[i], w[i]), rstd, c);
              acc[i] += p.dw_term(x[i], dy[i], rstd);
            }
          }
        }
      },
      std::max<std::int64_t>(1, min_rows_per_thread(p) * chunks / p.tokens));
  std::vector<float> sum(static_cast<std::size_t>(h), 0.0f);
  for (std::int64_t chunk = 0; chunk < chunks; ++chunk)
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += partial[static_cast<std::size_t>(chunk) * sum.size() + i];
  for (std::size_t i = 0; i < sum.size(); ++i) t.dw[i] = p.to_dtype(sum[i]);
}

void run(const Problem& p, Tensors& t, const std::string& mode) {
  if (mode != "backward") forward(p, t);
  if (mode != "forward") backward(p, t);
}

CheckResult run_and_check(const Problem& p, Tensors& t, const std::string& mode) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (mode != "backward") std::fill(t.y.begin(), t.y.end(), nan), std::fill(t.rstd.begin(), t.rstd.end(), nan);
  if (mode != "forward") std::fill(t.dx.begin(), t.dx.end(), nan), std::fill(t.dw.begin(), t.dw.end(), nan);
  run(p, t, mode);
  return check(p, mode, t);
}

CheckResult check(const Problem& p, const std::string& mode, const Tensors& got, const Tensors* cpu) {
  const bool forward_pass = mode != "backward", backward_pass = mode != "forward";
  const std::int64_t h = p.hidden;
  const double eps = p.eps, offset = p.offset, magnitude_offset = std::fabs(offset);
  Worst worst;
  std::vector<double> dw(static_cast<std::size_t>(h), 0.0), dw_scale(static_cast<std::size_t>(h), 0.0);
  for (std::int64_t row = 0; row < p.tokens; ++row) {
    const float *x = got.x.data() + row * h, *dy = got.dy.data() + row * h, *w = got.w.data();
    double squares = 0;
    for (std::int64_t i = 0; i < h; ++i) squares += static_cast<double>(x[i]) * x[i];
    const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(h) + eps);
    if (forward_pass) {
      worst.see("rstd", row, got.rstd[static_cast<std::size_t>(row)], rstd, rstd);
      for (std::int64_t i = 0; i < h; ++i)
        worst.see("y", row * h + i, got.y[static_cast<std::size_t>(row * h + i)], x[i] * rstd * (offset + w[i]),
                  std::fabs(x[i]) * rstd * (magnitude_offset + std::fabs(w[i])));
    }
    if (backward_pass) {
      double dot = 0, dot_scale = 0;  // Σ m·x, and Σ |m·x|
      for (std::int64_t i = 0; i < h; ++i) {
        dot += dy[i] * (offset + w[i]) * x[i];
        dot_scale += std::fabs(static_cast<double>(dy[i]) * x[i]) * (magnitude_offset + std::fabs(w[i]));
      }
      const double rstd3_over_h = rstd * rstd * rstd / static_cast<double>(h);
      for (std::int64_t i = 0; i < h; ++i) {
        const double exact = rstd * dy[i] * (offset + w[i]) - rstd3_over_h * dot * x[i];
        const double scale =
            rstd * std::fabs(dy[i]) * (magnitude_offset + std::fabs(w[i])) + rstd3_over_h * dot_scale * std::fabs(x[i]);
        worst.see("dx", row * h + i, got.dx[static_cast<std::size_t>(row * h + i)], exact, scale);
        dw[static_cast<std::size_t>(i)] += static_cast<double>(dy[i]) * x[i] * rstd;
        dw_scale[static_cast<std::size_t>(i)] += std::fabs(static_cast<double>(dy[i]) * x[i]) * rstd;
      }
    }
  }
  if (backward_pass)
    for (std::size_t i = 0; i < dw.size(); ++i)
      worst.see("dw", static_cast<std::int64_t>(i), got.dw[i], dw[i], dw_scale[i]);

  CheckResult result{
      worst.error <= tolerance(p),
      fmt::format(
          "rms_norm {} {}: {} vs float64; worst error {:.3e} (|got-exact|/scale, tolerance {:.2g}) at {}: got {:.9g}, "
          "exact {:.9g}",
          p.describe(), mode,
          forward_pass && backward_pass ? "y, rstd, dx, dw"
          : forward_pass                ? "y, rstd"
                                        : "dx, dw",
          worst.error, tolerance(p), worst.where, worst.got, worst.exact)};
  if (!cpu) return result;

  const auto same_bits = [](const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
  };
  const bool inputs_equal = same_bits(got.x, cpu->x) && same_bits(got.w, cpu->w) && same_bits(got.dy, cpu->dy);
  result.passed = result.passed && inputs_equal;
  result.detail += inputs_equal ? "; inputs equal to the host's bit for bit" : "; inputs DIFFER from the host's";
  if (!p.bf16) return result;
  std::size_t compared = 0, differing = 0;
  const auto compare = [&](const std::vector<float>& a, const std::vector<float>& b) {
    compared += a.size();
    for (std::size_t i = 0; i < a.size(); ++i) differing += i >= b.size() || !(a[i] == b[i]);
  };
  if (forward_pass) compare(got.y, cpu->y), compare(got.rstd, cpu->rstd);
  if (backward_pass) compare(got.dx, cpu->dx), compare(got.dw, cpu->dw);
  const std::size_t allowed = compared / 100 + 1;
  result.passed = result.passed && differing <= allowed;
  result.detail += fmt::format("; {} of {} output elements differ from the CPU implementation's (at most {} may)",
                               differing, compared, allowed);
  return result;
}

// forward: 4 FLOPs an element (x², its sum, x·rstd, ·(offset + w)); reads x and w, writes y and rstd.
// backward: 10 (m, m·x and its sum, the 4 of dx, x·rstd·dy and its sum); reads x, dy, w and rstd,
// writes dx and dw. full: both. Per-row scalars and the per-column offset + w are not counted.
Work work(const Problem& p, const std::string& mode) {
  const double n = static_cast<double>(p.tokens) * static_cast<double>(p.hidden), h = static_cast<double>(p.hidden);
  const double e = static_cast<double>(p.element_size()), rstd = static_cast<double>(p.tokens * p.rstd_size());
  Work w;
  if (mode != "backward") w.flops += 4 * n, w.bytes += (2 * n + h) * e + rstd;
  if (mode != "forward") w.flops += 10 * n, w.bytes += (3 * n + 2 * h) * e + rstd;
  return w;
}

namespace {

struct CpuRmsNorm final : Instance {
  explicit CpuRmsNorm(const Parameters& params) : p(params), t(make_inputs(p)) {}
  BoundMode bind(const std::string& mode) override {
    if (mode == "backward") run(p, t, "forward");  // backward reads the rstd forward saves
    return {[this, mode] { run(p, t, mode); }, [this, mode] { return run_and_check(p, t, mode); }};
  }
  Problem p;
  Tensors t;
};

}  // namespace

KS_KERNEL(rms_norm, "RMSNorm",
          "Liger-Kernel's RMSNorm, y = x / sqrt(mean(x²) + eps) · (offset + w), and its backward") {
  kernel.integer("tokens", 2048, "rows of x (batch × sequence length)").min(1);
  kernel.integer("hidden", 4096, "columns of x, elements of w (at most 65536, Liger's largest row)").min(1).max(65536);
  kernel.choice("dtype", "bf16", {"bf16", "fp32"}, "element type of x, w, y, dy, dx and dw");
  kernel.number("eps", 1e-6, "added to mean(x²)").min(0);
  kernel.number("offset", 0.0, "added to w (1.0 for Gemma)");
  kernel.choice("casting_mode", "llama", {"llama", "gemma", "none"}, "where the dtype rounds, as Liger's casting_mode");
  kernel.integer("seed", 0, "seed of the generated x, w and dy").min(0);
  kernel.modes({"forward", "backward", "full"});
  kernel.work([](const Parameters& p, const std::string& mode) { return work(Problem(p), mode); });
}

KS_IMPLEMENTATION(rms_norm, cpu, cpu, "fp32 loops rounding where the casting mode does, rows over threads") {
  return std::make_unique<CpuRmsNorm>(params);
}

}  // namespace ks::rms_norm
