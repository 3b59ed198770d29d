// gemm's schema, input generator, work counts and sampled check; the implementations live in
// gemm_cpu.cpp and gemm_cublaslt.cu.
#include "kernels/gemm/gemm.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace ks {
namespace gemm {
namespace {

// Entries compared by check_entries when the output is large; smaller outputs are compared whole.
constexpr std::int64_t kSampledEntries = 64;
constexpr std::int64_t kCompareAllUpTo = 4096;

std::vector<std::pair<std::int64_t, std::int64_t>> entries_to_compare(const Params& p) {
  std::vector<std::pair<std::int64_t, std::int64_t>> entries;
  if (p.m * p.n <= kCompareAllUpTo) {
    for (std::int64_t row = 0; row < p.m; ++row)
      for (std::int64_t col = 0; col < p.n; ++col) entries.emplace_back(row, col);
    return entries;
  }
  // The corners catch edge-tile mistakes; the rest are spread by the generator (matrix id 3 keeps
  // them independent of the inputs).
  entries.emplace_back(0, 0);
  entries.emplace_back(p.m - 1, p.n - 1);
  entries.emplace_back(0, p.n - 1);
  entries.emplace_back(p.m - 1, 0);
  for (std::int64_t i = 0; static_cast<std::int64_t>(entries.size()) < kSampledEntries; ++i) {
    const auto row = static_cast<std::int64_t>((input_value(p.seed, 3, 2 * i) + 1.0f) * 0.5f * p.m);
    const auto col = static_cast<std::int64_t>((input_value(p.seed, 3, 2 * i + 1) + 1.0f) * 0.5f * p.n);
    entries.emplace_back(std::min(row, p.m - 1), std::min(col, p.n - 1));
  }
  return entries;
}

ParamSpec dimension(const std::string& name, const std::string& help) {
  ParamSpec spec;
  spec.name = name;
  spec.type = ParamType::integer;
  spec.default_value = 1024;
  spec.min = 1;
  spec.help = help;
  return spec;
}

}  // namespace

Params params_from_json(const Json& j) {
  Params p;
  p.m = j.at("M").get<std::int64_t>();
  p.n = j.at("N").get<std::int64_t>();
  p.k = j.at("K").get<std::int64_t>();
  p.dtype = j.at("dtype").get<std::string>();
  p.seed = j.at("seed").get<std::uint64_t>();
  if (p.m < 1 || p.n < 1 || p.k < 1)
    throw std::invalid_argument(fmt::format("gemm: M, N and K must be at least 1, got {}×{}×{}", p.m, p.n, p.k));
  if (p.dtype != "bf16" && p.dtype != "fp32")
    throw std::invalid_argument("gemm: dtype: expected bf16 or fp32, got " + p.dtype);
  return p;
}

float element(const Params& p, Matrix matrix, std::int64_t row, std::int64_t col) {
  const std::int64_t cols = matrix == kA ? p.k : p.n;
  const float value = input_value(p.seed, matrix, static_cast<std::uint64_t>(row * cols + col));
  return p.is_bf16() ? round_to_bf16(value) : value;
}

std::vector<float> make_matrix(const Params& p, Matrix matrix) {
  const std::int64_t rows = matrix == kA ? p.m : p.k;
  const std::int64_t cols = matrix == kA ? p.k : p.n;
  std::vector<float> values(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    const float value = input_value(p.seed, matrix, static_cast<std::uint64_t>(i));
    values[static_cast<std::size_t>(i)] = p.is_bf16() ? round_to_bf16(value) : value;
  }
  return values;
}

double flops(const Params& p) { return 2.0 * static_cast<double>(p.m) * p.n * p.k; }

double bytes(const Params& p) {
  const double element_size = p.is_bf16() ? 2.0 : 4.0;
  return element_size * (static_cast<double>(p.m) * p.k + static_cast<double>(p.k) * p.n +
                         static_cast<double>(p.m) * p.n);
}

double tolerance(const Params& p) {
  // fp32 sums of K terms stay far below 1e-5 of Σ|a·b|; a bf16 output adds its rounding (2^-9 of
  // the value), so bf16 gets the loose bound usual for bf16 results.
  return p.is_bf16() ? 1e-2 : 1e-5;
}

CheckResult check_entries(const Params& p, const std::function<double(std::int64_t, std::int64_t)>& got) {
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
  CheckResult result;
  result.passed = worst <= tolerance(p);
  result.detail = fmt::format(
      "gemm {}x{}x{} {}: {} entries vs double dot products; worst error {:.3e} (|got-exact|/sum|a*b|, "
      "tolerance {:.1e}) at C[{},{}]: got {:.9g}, exact {:.9g}",
      p.m, p.n, p.k, p.dtype, entries.size(), worst, tolerance(p), worst_entry.first, worst_entry.second,
      worst_got, worst_exact);
  return result;
}

}  // namespace gemm

KernelSpec make_gemm_kernel() {
  KernelSpec spec;
  spec.name = "gemm";
  spec.title = "Matrix multiplication";
  spec.description = "C = A·B (row-major, A M×K, B K×N); bf16 inputs with fp32 accumulation, or fp32";
  spec.parameters.push_back(gemm::dimension("M", "rows of A and C"));
  spec.parameters.push_back(gemm::dimension("N", "columns of B and C"));
  spec.parameters.push_back(gemm::dimension("K", "columns of A, rows of B (the reduction)"));
  ParamSpec dtype;
  dtype.name = "dtype";
  dtype.type = ParamType::string;
  dtype.default_value = "bf16";
  dtype.allowed = {"fp32", "bf16"};
  dtype.help = "fp32, or bf16 (bf16 inputs, fp32 accumulation)";
  spec.parameters.push_back(dtype);
  ParamSpec seed;
  seed.name = "seed";
  seed.type = ParamType::integer;
  seed.default_value = 0;
  seed.min = 0;
  seed.help = "seed of the generated inputs";
  spec.parameters.push_back(seed);
  spec.modes = {"forward"};
  spec.implementations = {{"cpu", Backend::cpu, "blocked, multi-threaded, fp32 accumulation"},
                          {"cublaslt", Backend::cuda,
                           "cuBLASLt matmul, fastest of the top 8 heuristic algorithms, 32 MiB workspace"},
                          {"cublas", Backend::cuda, "cublasGemmEx with cuBLAS's default algorithm (as torch.matmul)"}};
  spec.validate = [](const Json& params) -> std::optional<std::string> {
    (void)params;  // every constraint of gemm is a bound of one parameter, checked by the schema
    return std::nullopt;
  };
  spec.instantiate = [](const std::string& implementation, const Json& params) -> std::unique_ptr<Instance> {
    const gemm::Params p = gemm::params_from_json(params);
    if (implementation == "cpu") return gemm::make_cpu_instance(p);
    if (implementation == "cublaslt") return gemm::make_cublaslt_instance(p);
    if (implementation == "cublas") return gemm::make_cublas_instance(p);
    throw std::invalid_argument("gemm: unknown implementation: " + implementation);
  };
  return spec;
}

}  // namespace ks
