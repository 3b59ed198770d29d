// gemm's `cpu` implementation: blocked over K and N so a panel of B stays in cache, row blocks
// spread over the hardware threads, fp32 accumulation.
#include <algorithm>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernels/gemm/gemm.h"

namespace ks::gemm {
namespace {

// A 128×256 fp32 panel of B is 128 KiB: it stays in L2 while every row of the block streams by.
constexpr std::int64_t kBlockK = 128;
constexpr std::int64_t kBlockN = 256;

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

void require_forward(const std::string& mode) {
  if (mode != "forward") throw std::invalid_argument("gemm: unknown mode: " + mode + " (gemm has only forward)");
}

class CpuGemm final : public Instance {
 public:
  explicit CpuGemm(const Params& p)
      : p_(p), a_(make_matrix(p, kA)), b_(make_matrix(p, kB)), c_(static_cast<std::size_t>(p.m * p.n)) {}

  void run(const std::string& mode) override {
    require_forward(mode);
    multiply(a_.data(), b_.data(), c_.data(), p_.m, p_.n, p_.k);
    ran_ = true;
  }
  double flops(const std::string& mode) const override {
    require_forward(mode);
    return gemm::flops(p_);
  }
  double bytes(const std::string& mode) const override {
    require_forward(mode);
    return gemm::bytes(p_);
  }
  CheckResult check(const std::string& mode) override {
    if (!ran_) run(mode);
    return check_entries(p_, [this](std::int64_t row, std::int64_t col) {
      return static_cast<double>(c_[static_cast<std::size_t>(row * p_.n + col)]);
    });
  }

 private:
  Params p_;
  std::vector<float> a_, b_, c_;
  bool ran_ = false;
};

}  // namespace

void multiply(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n, std::int64_t k) {
  // Rows are dealt in contiguous ranges, one per thread; a few rows per thread are not worth a thread.
  constexpr std::int64_t kMinRowsPerThread = 4;
  const std::int64_t hardware = std::max<std::int64_t>(1, std::thread::hardware_concurrency());
  const std::int64_t threads = std::clamp<std::int64_t>(m / kMinRowsPerThread, 1, hardware);
  if (threads == 1) {
    multiply_rows(a, b, c, 0, m, n, k);
    return;
  }
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(threads));
  for (std::int64_t t = 0; t < threads; ++t) {
    const std::int64_t begin = m * t / threads, end = m * (t + 1) / threads;
    workers.emplace_back(multiply_rows, a, b, c, begin, end, n, k);
  }
  for (auto& worker : workers) worker.join();
}

std::unique_ptr<Instance> make_cpu_instance(const Params& p) { return std::make_unique<CpuGemm>(p); }

}  // namespace ks::gemm
