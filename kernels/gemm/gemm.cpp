// gemm's declaration, input generator, work counts and sampled check; each implementation lives in
// a file of its own (cpu.cpp, cublaslt.cu, cublas.cu).
#include "kernels/gemm/gemm.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "kernels/common/bf16.h"

namespace ks {
namespace gemm {
namespace {

// Entries compared by check_entries when the output is large; smaller outputs are compared whole.
constexpr std::int64_t kSampledEntries = 64;
constexpr std::int64_t kCompareAllUpTo = 4096;

std::vector<std::pair<std::int64_t, std::int64_t>> entries_to_compare(const Shape& p) {
  std::vector<std::pair<std::int64_t, std::int64_t>> entries;
  if (p.m * p.n <= kCompareAllUpTo) {
    for (std::int64_t row = 0; row < p.m; ++row)
      for (std::int64_t col = 0; col < p.n; ++col) entries.emplace_back(row, col);
    return entries;
  }
  // The corners catch edge-tile mistakes; the rest are spread by the generator (matrix id 3 keeps
  // them independent of the inputs).
  entries.insert(entries.end(), {{0, 0}, {p.m - 1, p.n - 1}, {0, p.n - 1}, {p.m - 1, 0}});
  for (std::int64_t i = 0; static_cast<std::int64_t>(entries.size()) < kSampledEntries; ++i) {
    const auto row = static_cast<std::int64_t>((counter_symmetric(p.seed, 3, 2 * i) + 1.0f) * 0.5f * p.m);
    const auto col = static_cast<std::int64_t>((counter_symmetric(p.seed, 3, 2 * i + 1) + 1.0f) * 0.5f * p.n);
    entries.emplace_back(std::min(row, p.m - 1), std::min(col, p.n - 1));
  }
  return entries;
}

}  // namespace

Shape::Shape(const Parameters& p, bool generated_here)
    : m(p.get<std::int64_t>("M")),
      n(p.get<std::int64_t>("N")),
      k(p.get<std::int64_t>("K")),
      bf16(p.is("dtype", "bf16")),
      seed(p.get<std::uint64_t>("seed")) {
  if (generated_here && p.is("inputs", "torch_rand"))
    throw std::invalid_argument(
        "gemm: inputs torch_rand is drawn by torch's generator: only the Python implementation (torch) reproduces it");
}

std::string Shape::describe() const { return fmt::format("{}x{}x{} {}", m, n, k, bf16 ? "bf16" : "fp32"); }

float element(const Shape& p, Matrix matrix, std::int64_t row, std::int64_t col) {
  const std::int64_t cols = matrix == kA ? p.k : p.n;
  const float value = counter_symmetric(p.seed, matrix, static_cast<std::uint64_t>(row * cols + col));
  return p.bf16 ? round_to_bf16(value) : value;
}

std::vector<float> make_matrix(const Shape& p, Matrix matrix) {
  const std::int64_t rows = matrix == kA ? p.m : p.k;
  const std::int64_t cols = matrix == kA ? p.k : p.n;
  std::vector<float> values(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    const float value = counter_symmetric(p.seed, matrix, static_cast<std::uint64_t>(i));
    values[static_cast<std::size_t>(i)] = p.bf16 ? round_to_bf16(value) : value;
  }
  return values;
}

// 2·M·N·K FLOPs; A and B read and C written in the dtype's size (C in bf16 for bf16, as
// torch.matmul returns it).
Work work(const Shape& p) {
  const double element_size = static_cast<double>(p.element_size());
  return {2.0 * static_cast<double>(p.m) * p.n * p.k,
          element_size *
              (static_cast<double>(p.m) * p.k + static_cast<double>(p.k) * p.n + static_cast<double>(p.m) * p.n)};
}

double tolerance(const Shape& p) {
  // fp32 sums of K terms stay far below 1e-5 of Σ|a·b|; a bf16 output adds its rounding (2^-9 of
  // the value), so bf16 gets the loose bound usual for bf16 results.
  return p.bf16 ? 1e-2 : 1e-5;
}

CheckResult check_entries(const Shape& p, const std::function<double(std::int64_t, std::int64_t)>& got) {
  const auto entries = entries_to_compare(p);
  double worst = 0;
  std::pair<std::int64_t, std::int64_t> worst_entry{0, 0};
  double worst_got = 0, worst_exact = 0;
  for (const auto& [row, col] : entries) {
    double exact = 0, scale = 0;
    for (std::int64_t i = 0; i < p.k; ++i) {
      const double product = static_cast<double>(element(p, kA, row, i)) * element(p, kB, i, col);
      exact += product;
      scale += std::fabs(product);
    }
    const double value = got(row, col);
    // A NaN compares false with everything, so it is caught explicitly.
    const double error = std::isfinite(value) ? std::fabs(value - exact) / std::max(scale, 1e-30)
                                              : std::numeric_limits<double>::infinity();
    if (error > worst || !std::isfinite(error)) {
      worst = error;
      worst_entry = {row, col};
      worst_got = value;
      worst_exact = exact;
    }
  }
  return {worst <= tolerance(p),
          fmt::format("gemm {}: {} entries vs double dot products; worst error {:.3e} (|got-exact|/sum|a*b|, tolerance "
                      "{:.1e}) at C[{},{}]: got {:.9g}, exact {:.9g}",
                      p.describe(), entries.size(), worst, tolerance(p), worst_entry.first, worst_entry.second,
                      worst_got, worst_exact)};
}

}  // namespace gemm

KS_KERNEL(gemm, "Matrix multiplication",
          "C = A·B (row-major, A M×K, B K×N); bf16 inputs with fp32 accumulation, or fp32") {
  kernel.integer("M", 1024, "rows of A and C").min(1);
  kernel.integer("N", 1024, "columns of B and C").min(1);
  kernel.integer("K", 1024, "columns of A, rows of B (the reduction)").min(1);
  kernel.choice("dtype", "bf16", {"fp32", "bf16"}, "fp32, or bf16 (bf16 inputs, fp32 accumulation)");
  declare_drawn_inputs(kernel, "A and B",
                       "torch.manual_seed(seed), then torch.rand in the dtype: the Python implementation only");
  kernel.modes({"forward"});
  kernel.work([](const Parameters& p, const std::string&) { return gemm::work(gemm::Shape::of_any_draw(p)); });
}

}  // namespace ks
