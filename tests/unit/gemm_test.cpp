// gemm: the CPU product against straightforward double loops, the bf16 rounding, the input generator,
// the sampled check, and the schema's behaviour on bad parameters and without CUDA.
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <gtest/gtest.h>

#include "kernels/common/bf16.h"
#include "kernels/gemm/gemm.h"
#include "support/kernels.h"

namespace {

using ks::gemm::Shape;

ks::Json params_json(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& dtype, std::uint64_t seed = 0,
                     const std::string& inputs = "counter") {
  return {{"M", m}, {"N", n}, {"K", k}, {"dtype", dtype}, {"seed", seed}, {"inputs", inputs}};
}

Shape shape(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& dtype, std::uint64_t seed = 0) {
  return Shape(ks::Parameters(params_json(m, n, k, dtype, seed)));
}

const ks::KernelSpec& gemm_kernel() { return ks::testing::builtin_kernel("gemm"); }

std::uint32_t bits_of(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

class CpuMultiply : public ::testing::TestWithParam<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::string>> {
};

TEST_P(CpuMultiply, MatchesDoubleLoopsOnTheSameInputs) {
  const auto [m, n, k, dtype] = GetParam();
  const Shape p = shape(m, n, k, dtype, 7);
  const auto a = ks::gemm::make_matrix(p, ks::gemm::kA);
  const auto b = ks::gemm::make_matrix(p, ks::gemm::kB);
  std::vector<float> c(static_cast<std::size_t>(m * n), std::numeric_limits<float>::quiet_NaN());
  ks::gemm::multiply(a.data(), b.data(), c.data(), m, n, k);
  for (std::int64_t row = 0; row < m; ++row) {
    for (std::int64_t col = 0; col < n; ++col) {
      double exact = 0, scale = 0;
      for (std::int64_t i = 0; i < k; ++i) {
        const double product = static_cast<double>(a[row * k + i]) * b[i * n + col];
        exact += product;
        scale += std::fabs(product);
      }
      // fp32 accumulation of k products: far within 1e-5 of Σ|a·b|.
      ASSERT_NEAR(c[row * n + col], exact, 1e-5 * scale)
          << "C[" << row << "," << col << "] of " << m << "x" << n << "x" << k;
    }
  }
}

// Odd sizes, and sizes that cross the 256-column and 128-deep blocks and the per-thread row split.
INSTANTIATE_TEST_SUITE_P(OddSizes, CpuMultiply,
                         ::testing::Combine(::testing::Values(1, 7, 33), ::testing::Values(1, 13, 300),
                                            ::testing::Values(1, 5, 129, 257), ::testing::Values("fp32", "bf16")));

TEST(Bf16Rounding, RoundsToNearestWithTiesToEven) {
  // 1 + 2^-8 lies halfway between the bf16 neighbours 1 and 1 + 2^-7: the even one (1) wins.
  EXPECT_EQ(ks::round_to_bf16(1.0f + std::ldexp(1.0f, -8)), 1.0f);
  // 1 + 3·2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  EXPECT_EQ(ks::round_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 1.0f + std::ldexp(1.0f, -6));
  // Just above a tie rounds up; just below rounds down.
  EXPECT_EQ(ks::round_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 1.0f + std::ldexp(1.0f, -7));
  EXPECT_EQ(ks::round_to_bf16(-(1.0f + std::ldexp(1.0f, -8) - std::ldexp(1.0f, -20))), -1.0f);
  EXPECT_TRUE(std::isnan(ks::round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(ks::round_to_bf16(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
}

TEST(GemmInputs, AreDeterministicSeededNonZeroAndRoundedForBf16) {
  const Shape fp32 = shape(31, 17, 23, "fp32", 3);
  const Shape bf16 = shape(31, 17, 23, "bf16", 3);
  const auto a = ks::gemm::make_matrix(fp32, ks::gemm::kA);
  EXPECT_EQ(a, ks::gemm::make_matrix(fp32, ks::gemm::kA));
  EXPECT_NE(a, ks::gemm::make_matrix(shape(31, 17, 23, "fp32", 4), ks::gemm::kA));
  EXPECT_NE(a, ks::gemm::make_matrix(fp32, ks::gemm::kB));
  for (float v : a) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
    EXPECT_NE(v, 0.0f);
  }
  const auto a16 = ks::gemm::make_matrix(bf16, ks::gemm::kA);
  std::size_t changed = 0;
  for (std::size_t i = 0; i < a16.size(); ++i) {
    EXPECT_EQ(bits_of(a16[i]) & 0xFFFFu, 0u) << "not a bf16 value at " << i;
    EXPECT_EQ(a16[i], ks::round_to_bf16(a[i]));
    changed += a16[i] != a[i];
  }
  EXPECT_GT(changed, a16.size() / 2);
  // element() agrees with make_matrix, for both matrices.
  const auto b16 = ks::gemm::make_matrix(bf16, ks::gemm::kB);
  EXPECT_EQ(ks::gemm::element(bf16, ks::gemm::kA, 30, 22), a16.back());
  EXPECT_EQ(ks::gemm::element(bf16, ks::gemm::kB, 4, 5), b16[4 * 17 + 5]);
}

TEST(GemmCheck, FailsForAWrongEntryOrANaN) {
  for (const Shape& p : {shape(5, 6, 7, "fp32"), shape(200, 300, 40, "bf16")}) {
    const auto exact = [&](std::int64_t row, std::int64_t col) {
      double sum = 0;
      for (std::int64_t i = 0; i < p.k; ++i)
        sum += static_cast<double>(ks::gemm::element(p, ks::gemm::kA, row, i)) *
               ks::gemm::element(p, ks::gemm::kB, i, col);
      return sum;
    };
    EXPECT_TRUE(ks::gemm::check_entries(p, exact).passed);
    // The corner entries are always compared, so a wrong last entry is caught even when sampling.
    const auto wrong_corner = [&](std::int64_t row, std::int64_t col) {
      return exact(row, col) + ((row == p.m - 1 && col == p.n - 1) ? 0.5 : 0.0);
    };
    EXPECT_FALSE(ks::gemm::check_entries(p, wrong_corner).passed);
    const auto nan = [&](std::int64_t, std::int64_t) { return std::numeric_limits<double>::quiet_NaN(); };
    EXPECT_FALSE(ks::gemm::check_entries(p, nan).passed);
    const auto zeros = [&](std::int64_t, std::int64_t) { return 0.0; };
    EXPECT_FALSE(ks::gemm::check_entries(p, zeros).passed);
  }
}

TEST(GemmKernel, CpuInstanceRunsAndChecksAgainstTheReference) {
  const ks::KernelSpec& spec = gemm_kernel();
  for (const std::string dtype : {"fp32", "bf16"}) {
    auto instance = spec.instantiate("cpu", params_json(67, 45, 131, dtype));
    const ks::BoundMode forward = spec.bind(*instance, "forward");
    forward.run();
    const ks::CheckResult result = forward.check();
    EXPECT_TRUE(result.passed) << result.detail;
    const ks::Work work = spec.work_of(params_json(67, 45, 131, dtype), "forward");
    EXPECT_DOUBLE_EQ(work.flops, 2.0 * 67 * 45 * 131);
    const double size = dtype == "bf16" ? 2 : 4;
    EXPECT_DOUBLE_EQ(work.bytes, size * (67 * 131 + 131 * 45 + 67 * 45));
    EXPECT_EQ(instance->device_bytes(), 0u);
    EXPECT_EQ(instance->stream(), nullptr);
  }
}

TEST(GemmKernel, SchemaListsParametersModesAndImplementations) {
  const ks::KernelSpec& spec = gemm_kernel();
  EXPECT_EQ(spec.name, "gemm");
  for (const char* name : {"M", "N", "K", "dtype", "seed"}) EXPECT_NE(spec.parameter(name), nullptr) << name;
  EXPECT_EQ(spec.parameter("dtype")->default_value, "bf16");
  EXPECT_EQ(spec.parameter("M")->min, 1.0);
  EXPECT_EQ(spec.modes, std::vector<std::string>{"forward"});
  ASSERT_NE(spec.implementation("cublaslt"), nullptr);
  EXPECT_EQ(spec.implementation("cublaslt")->backend, ks::Backend::cuda);
  EXPECT_EQ(spec.implementation("cpu")->backend, ks::Backend::cpu);
  EXPECT_FALSE(spec.problem_with(params_json(1, 2, 3, "fp32")).has_value());
}

TEST(GemmKernel, RejectsBadParametersModesAndImplementations) {
  const ks::KernelSpec& spec = gemm_kernel();
  EXPECT_THROW(spec.instantiate("cpu", params_json(4, 4, 4, "fp16")), std::invalid_argument);
  EXPECT_THROW(spec.instantiate("cpu", params_json(0, 4, 4, "fp32")), std::invalid_argument);
  EXPECT_THROW(spec.instantiate("tensor-cores", params_json(4, 4, 4, "fp32")), std::invalid_argument);
  auto instance = spec.instantiate("cpu", params_json(4, 4, 4, "fp32"));
  EXPECT_THROW(spec.bind(*instance, "backward"), std::invalid_argument);
  EXPECT_THROW(spec.work_of(params_json(4, 4, 4, "fp32"), "backward"), std::invalid_argument);
}

TEST(GemmKernel, CppImplementationsRefuseTorchRandInputsWhichStillHaveAWorkCount) {
  const ks::KernelSpec& spec = gemm_kernel();
  const ks::Json torch_rand = params_json(67, 45, 131, "bf16", 0, "torch_rand");
  EXPECT_FALSE(spec.problem_with(torch_rand).has_value());
  EXPECT_EQ(spec.parameter("inputs")->default_value, "counter");
  try {
    spec.instantiate("cpu", torch_rand);
    FAIL() << "the cpu implementation accepted inputs torch_rand";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("inputs torch_rand is drawn by torch's generator"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(spec.instantiate("cpu", params_json(4, 4, 4, "fp32", 0, "numpy")), std::invalid_argument);
  // The work of a point does not depend on how its inputs are drawn.
  EXPECT_EQ(spec.work_of(torch_rand, "forward").flops, spec.work_of(params_json(67, 45, 131, "bf16"), "forward").flops);
}

#ifndef KERNELSWEEP_HAVE_CUDA
TEST(GemmKernel, CublasltSaysItWasBuiltWithoutCuda) {
  const ks::KernelSpec& spec = gemm_kernel();
  try {
    spec.instantiate("cublaslt", params_json(4, 4, 4, "bf16"));
    FAIL() << "instantiate succeeded without CUDA";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("built without CUDA"), std::string::npos) << error.what();
  }
}
#endif

}  // namespace
