// gemm's `cpu` implementation: blocked over K and N so a panel of B stays in cache, row blocks
// spread over the hardware threads, fp32 accumulation.
#include <algorithm>
#include <memory>

#include "kernels/common/cpu.h"
#include "kernels/gemm/gemm.h"

namespace ks::gemm {
namespace {

// A 128×256 fp32 panel of B is 128 KiB: it stays in L2 while every row of the block streams by.
constexpr std::int64_t kBlockK = 128;
constexpr std::int64_t kBlockN = 256;
// A thread for fewer rows than this is not worth starting.
constexpr std::int64_t kMinRowsPerThread = 4;

void multiply_rows(const float* a, const float* b, float* c, std::int64_t row_begin, std::int64_t row_end,
                   std::int64_t n, std::int64_t k) {
  std::fill(c + row_begin * n, c + row_end * n, 0.0f);
  for (std::int64_t col0 = 0; col0 < n; col0 += kBlockN) {
    const std::int64_t col1 = std::min(col0 + kBlockN, n);
    for (std::int64_t k0 = 0; k0 < k; k0 += kBlockK) {
      const std::int64_t k1 = std::min(k0 + kBlockK, k);
      for (std::int64_t row = row_begin; row < row_end; ++row) {
        float* c_row = c + row * n;
        for (std::int64_t i = k0; i < k1; ++i) {
          const float a_value = a[row * k + i];
          const float* b_row = b + i * n;
          for (std::int64_t col = col0; col < col1; ++col) c_row[col] += a_value * b_row[col];
        }
      }
    }
  }
}

class CpuGemm final : public Instance {
 public:
  explicit CpuGemm(const Parameters& params)
      : s_(params), a_(make_matrix(s_, kA)), b_(make_matrix(s_, kB)), c_(static_cast<std::size_t>(s_.m * s_.n)) {}

  BoundMode bind(const std::string&) override {
    return run_then_compare([this] { multiply(a_.data(), b_.data(), c_.data(), s_.m, s_.n, s_.k); },
                            [this] { return check(); });
  }

 private:
  CheckResult check() const {
    return check_entries(s_, [this](std::int64_t row, std::int64_t col) {
      return static_cast<double>(c_[static_cast<std::size_t>(row * s_.n + col)]);
    });
  }

  Shape s_;
  std::vector<float> a_, b_, c_;
};

}  // namespace

void multiply(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n, std::int64_t k) {
  parallel_for(
      m, [&](std::int64_t begin, std::int64_t end) { multiply_rows(a, b, c, begin, end, n, k); }, kMinRowsPerThread);
}

}  // namespace ks::gemm

KS_IMPLEMENTATION(gemm, cpu, cpu, "blocked, multi-threaded, fp32 accumulation") {
  return std::make_unique<ks::gemm::CpuGemm>(params);
}
