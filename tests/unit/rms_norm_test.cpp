// rms_norm: the CPU implementation against the float64 reference in every mode, dtype and casting
// mode at awkward shapes; hand-computed cases that pin the reference and where each casting mode
// rounds; the schema and the parameters it refuses.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "kernels/rms_norm/rms_norm.h"
#include "support/kernels.h"

namespace {

using ks::Json;
using ks::rms_norm::Problem;
using ks::rms_norm::Tensors;

const ks::KernelSpec& rms_norm() { return ks::testing::builtin_kernel("rms_norm"); }

Json params(std::int64_t tokens, std::int64_t hidden, const std::string& dtype = "bf16",
            const std::string& casting_mode = "llama", double offset = 0.0, double eps = 1e-6) {
  return {{"tokens", tokens}, {"hidden", hidden}, {"dtype", dtype},
          {"eps", eps},       {"offset", offset}, {"casting_mode", casting_mode},
          {"seed", 3}};
}

Problem problem(const Json& p) { return Problem(ks::Parameters(p)); }

// ---- the CPU implementation against the float64 reference ------------------------------------

using Case = std::tuple<std::tuple<int, int>, std::string, std::string, double>;  // shape, dtype, casting, offset

class RmsNormCpu : public ::testing::TestWithParam<Case> {};

TEST_P(RmsNormCpu, EveryModePassesItsCheck) {
  const auto& [shape, dtype, casting, offset] = GetParam();
  const auto [tokens, hidden] = shape;
  auto instance = rms_norm().instantiate("cpu", params(tokens, hidden, dtype, casting, offset));
  for (const std::string mode : {"forward", "backward", "full"}) {
    const ks::BoundMode bound = rms_norm().bind(*instance, mode);
    bound.run();
    const ks::CheckResult check = bound.check();
    EXPECT_TRUE(check.passed) << mode << ": " << check.detail;
  }
}

// hidden 1, odd, not a multiple of 8, a multiple of 8 with a tail past a power of two; one token;
// more rows than backward's 64 dw chunks, and fewer.
INSTANTIATE_TEST_SUITE_P(AwkwardShapes, RmsNormCpu,
                         ::testing::Combine(::testing::Values(std::tuple{1, 1}, std::tuple{5, 1}, std::tuple{1, 7},
                                                              std::tuple{3, 13}, std::tuple{70, 100},
                                                              std::tuple{2, 4104}, std::tuple{9, 1001}),
                                            ::testing::Values("bf16", "fp32"),
                                            ::testing::Values("llama", "gemma", "none"), ::testing::Values(0.0, 1.0)));

TEST(RmsNormCheck, FailsOnOutputsLeftUnwritten) {
  const Problem p = problem(params(4, 24));
  Tensors t = ks::rms_norm::make_inputs(p);  // outputs NaN
  EXPECT_FALSE(ks::rms_norm::check(p, "forward", t).passed);
  ks::rms_norm::forward(p, t);
  EXPECT_TRUE(ks::rms_norm::check(p, "forward", t).passed);
  EXPECT_FALSE(ks::rms_norm::check(p, "backward", t).passed) << "backward has not run: dx and dw are NaN";
  ks::rms_norm::backward(p, t);
  EXPECT_TRUE(ks::rms_norm::check(p, "full", t).passed);
  t.dw[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(ks::rms_norm::check(p, "backward", t).passed);
}

TEST(RmsNormCheck, ComparesWithTheCpuImplementationBitForBit) {
  const Problem p = problem(params(8, 40, "bf16"));
  Tensors cpu = ks::rms_norm::make_inputs(p);
  ks::rms_norm::run(p, cpu, "full");
  Tensors got = cpu;
  EXPECT_TRUE(ks::rms_norm::check(p, "full", got, &cpu).passed);
  got.x[17] = ks::round_to_bf16(got.x[17] * 1.01f);  // an input the host did not generate
  EXPECT_FALSE(ks::rms_norm::check(p, "full", got, &cpu).passed);
  got = cpu;
  for (std::size_t i = 0; i < 10; ++i) got.y[i * 7] = ks::round_to_bf16(got.y[i * 7] * (1 + 1.0f / 128));
  const ks::CheckResult check = ks::rms_norm::check(p, "full", got, &cpu);
  EXPECT_FALSE(check.passed) << "10 of 688 outputs a bf16 step or two off: within tolerance, but more than 1 %";
  EXPECT_NE(check.detail.find("10 of 688"), std::string::npos) << check.detail;
}

// ---- hand-computed cases -------------------------------------------------------------------------

// x = (3, 4), w = (1, 2), dy = (1, 1), eps 0: mean(x²) = 12.5, rstd = 1/sqrt(12.5) = sqrt(2)/5.
//   y  = x·rstd·w = (3·sqrt(2)/5, 8·sqrt(2)/5)
//   m  = dy·w = (1, 2), m·x = 11, dx = rstd·m − rstd³·11/2·x = rstd·(1 − 16.5·0.08, 2 − 22·0.08)
//      = rstd·(−0.32, 0.24)
//   dw = dy·x·rstd = (3·sqrt(2)/5, 4·sqrt(2)/5)
// The same with offset 1 and w = (0, 1).
Tensors hand_case(const Problem& p) {
  Tensors t = ks::rms_norm::make_inputs(p);
  t.x = {3, 4}, t.dy = {1, 1};
  t.w = p.offset == 0 ? std::vector<float>{1, 2} : std::vector<float>{0, 1};
  return t;
}

TEST(RmsNormHandComputed, ReferenceAndCpuAgreeWithTheFormulas) {
  const double rstd = std::sqrt(2.0) / 5;
  const std::vector<double> y{3 * rstd, 8 * rstd}, dx{-0.32 * rstd, 0.24 * rstd}, dw{3 * rstd, 4 * rstd};
  for (const double offset : {0.0, 1.0}) {
    for (const std::string casting : {"llama", "gemma", "none"}) {
      const Problem p = problem(params(1, 2, "fp32", casting, offset, 0.0));
      Tensors t = hand_case(p);
      ks::rms_norm::run(p, t, "full");
      EXPECT_NEAR(t.rstd[0], rstd, 1e-7);
      for (std::size_t i = 0; i < 2; ++i) {
        EXPECT_NEAR(t.y[i], y[i], 1e-6) << casting << " y[" << i << "]";
        EXPECT_NEAR(t.dx[i], dx[i], 1e-6) << casting << " dx[" << i << "]";
        EXPECT_NEAR(t.dw[i], dw[i], 1e-6) << casting << " dw[" << i << "]";
      }
      EXPECT_TRUE(ks::rms_norm::check(p, "full", t).passed) << ks::rms_norm::check(p, "full", t).detail;

      // The exact values pass; one 0.1 % off fails, in each output.
      Tensors exact = t;
      for (std::size_t i = 0; i < 2; ++i) exact.y[i] = y[i], exact.dx[i] = dx[i], exact.dw[i] = dw[i];
      exact.rstd[0] = rstd;
      EXPECT_TRUE(ks::rms_norm::check(p, "full", exact).passed);
      for (auto output : {&Tensors::y, &Tensors::dx, &Tensors::dw, &Tensors::rstd}) {
        Tensors off = exact;
        (off.*output)[0] *= 1.001f;
        EXPECT_FALSE(ks::rms_norm::check(p, "full", off).passed) << ks::rms_norm::check(p, "full", off).detail;
      }
    }
  }
}

// bf16, x = (7, 0.75), w = (1.125, 1.125), eps 0, offset 0 (bf16 steps: 2^-7 in [1, 2), 2^-10 in
// [0.125, 0.25), 0.25 in [32, 64)):
//   llama, gemma: Σx² = 49.5625 in fp32, rstd = 1/sqrt(24.78125) = 0.2008808
//     llama: x·rstd = (1.4061655, 0.1506606) → bf16 (1.40625, 0.150390625);
//            ·1.125 = (1.58203125, 0.1691894) → bf16 (1.578125 (a tie, to even), 0.1689453125)
//     gemma: x·rstd·1.125 = (1.5819362, 0.1694932) → bf16 (1.578125, 0.169921875)
//   none: x² in bf16 (49, 0.5625), their sum 49.5625 → bf16 49.5, rstd = 1/sqrt(24.75) = 0.2010076
//         (saved in bf16: 0.201171875); x·rstd·1.125 = (1.5829346, 0.1696001) → bf16 (1.5859375,
//         0.169921875)
TEST(RmsNormHandComputed, CastingModesRoundWhereLigersDo) {
  const struct {
    const char* casting;
    float y0, y1, saved_rstd;
  } expected[] = {{"llama", 1.578125f, 0.1689453125f, 0.2008808f},
                  {"gemma", 1.578125f, 0.169921875f, 0.2008808f},
                  {"none", 1.5859375f, 0.169921875f, 0.201171875f}};
  for (const auto& e : expected) {
    const Problem p = problem(params(1, 2, "bf16", e.casting, 0.0, 0.0));
    Tensors t = ks::rms_norm::make_inputs(p);
    t.x = {7, 0.75f}, t.w = {1.125f, 1.125f};
    ks::rms_norm::forward(p, t);
    EXPECT_EQ(t.y[0], e.y0) << e.casting;
    EXPECT_EQ(t.y[1], e.y1) << e.casting;
    EXPECT_NEAR(t.rstd[0], e.saved_rstd, 1e-7) << e.casting;
  }
}

// ---- the schema -----------------------------------------------------------------------------------

TEST(RmsNormSchema, ParametersModesAndImplementations) {
  const ks::KernelSpec& k = rms_norm();
  const std::vector<std::pair<std::string, Json>> defaults{
      {"tokens", 2048}, {"hidden", 4096},          {"dtype", "bf16"}, {"eps", 1e-6},
      {"offset", 0.0},  {"casting_mode", "llama"}, {"seed", 0}};
  ASSERT_EQ(k.parameters.size(), defaults.size());
  for (std::size_t i = 0; i < defaults.size(); ++i) {
    EXPECT_EQ(k.parameters[i].name, defaults[i].first);
    EXPECT_EQ(k.parameters[i].default_value, defaults[i].second) << defaults[i].first;
  }
  EXPECT_EQ(k.parameter("casting_mode")->allowed, (std::vector<Json>{"llama", "gemma", "none"}));
  EXPECT_EQ(k.parameter("dtype")->allowed, (std::vector<Json>{"bf16", "fp32"}));
  EXPECT_EQ(k.modes, (std::vector<std::string>{"forward", "backward", "full"}));
  ASSERT_NE(k.implementation("cpu"), nullptr);
  ASSERT_NE(k.implementation("cuda"), nullptr);
  EXPECT_EQ(k.implementation("cpu")->backend, ks::Backend::cpu);
  EXPECT_EQ(k.implementation("cuda")->backend, ks::Backend::cuda);
}

TEST(RmsNormSchema, RefusesBadParameters) {
  const auto refused = [](const std::string& key, const Json& value) {
    Json p = params(4, 8);
    p[key] = value;
    EXPECT_THROW(rms_norm().instantiate("cpu", p), std::invalid_argument) << key << " = " << value.dump();
  };
  refused("tokens", 0);
  refused("tokens", 2.5);
  refused("hidden", 0);
  refused("hidden", 65537);
  refused("dtype", "fp16");
  refused("casting_mode", "mistral");
  refused("eps", -1e-6);
  refused("eps", "small");
  refused("offset", "one");
  refused("seed", -1);
  refused("bias", true);  // no such parameter
  Json missing = params(4, 8);
  missing.erase("offset");
  EXPECT_THROW(rms_norm().instantiate("cpu", missing), std::invalid_argument);
  EXPECT_THROW(rms_norm().instantiate("triton", params(4, 8)), std::invalid_argument);
  auto instance = rms_norm().instantiate("cpu", params(4, 8));
  EXPECT_THROW(rms_norm().bind(*instance, "no-grad-forward"), std::invalid_argument);
  EXPECT_NO_THROW(rms_norm().instantiate("cpu", params(1, 65536)));
}

TEST(RmsNormWork, CountsFlopsAndTheLeastBytes) {
  const Json p = params(2048, 4096, "bf16", "llama");
  const double n = 2048.0 * 4096;
  const ks::Work forward = rms_norm().work_of(p, "forward"), backward = rms_norm().work_of(p, "backward");
  EXPECT_DOUBLE_EQ(forward.flops, 4 * n);
  EXPECT_DOUBLE_EQ(forward.bytes, 2 * (2 * n + 4096) + 4 * 2048);  // x, w read; y written; rstd fp32
  EXPECT_DOUBLE_EQ(backward.flops, 10 * n);
  EXPECT_DOUBLE_EQ(backward.bytes, 2 * (3 * n + 2 * 4096) + 4 * 2048);  // x, dy, w, rstd read; dx, dw
  const ks::Work full = rms_norm().work_of(p, "full");
  EXPECT_DOUBLE_EQ(full.flops, forward.flops + backward.flops);
  EXPECT_DOUBLE_EQ(full.bytes, forward.bytes + backward.bytes);
  // none saves rstd in the dtype; fp32 doubles the elements' bytes.
  const auto bytes = [](const std::string& dtype) {
    return rms_norm().work_of(params(2048, 4096, dtype, "none"), "forward").bytes;
  };
  EXPECT_DOUBLE_EQ(bytes("bf16"), 2 * (2 * n + 4096) + 2 * 2048);
  EXPECT_DOUBLE_EQ(bytes("fp32"), 4 * (2 * n + 4096) + 4 * 2048);
}

TEST(RmsNormInputs, AreTheSeedsAndRoundedToTheDtype) {
  const Problem bf16 = problem(params(3, 5, "bf16")), fp32 = problem(params(3, 5, "fp32"));
  const Tensors a = ks::rms_norm::make_inputs(bf16), b = ks::rms_norm::make_inputs(fp32);
  for (std::size_t i = 0; i < a.x.size(); ++i) {
    EXPECT_EQ(b.x[i], ks::counter_symmetric(3, ks::rms_norm::kX, i));
    EXPECT_EQ(a.x[i], ks::round_to_bf16(b.x[i]));
    EXPECT_EQ(a.dy[i], ks::round_to_bf16(ks::counter_symmetric(3, ks::rms_norm::kDy, i)));
    EXPECT_NE(a.x[i], a.dy[i]);
  }
  for (std::size_t i = 0; i < a.w.size(); ++i) EXPECT_EQ(b.w[i], ks::counter_symmetric(3, ks::rms_norm::kW, i));
  EXPECT_TRUE(std::isnan(a.y[0]) && std::isnan(a.dw[0]) && std::isnan(a.rstd[0]) && std::isnan(a.dx[0]));
}

}  // namespace
