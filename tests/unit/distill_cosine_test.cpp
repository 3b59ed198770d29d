// distill_cosine: the reference's gradients against finite differences of its loss, its loss against
// a second computation at a hand-checkable shape, the input generator, the schema, and the `cpu`
// implementation against the reference at small awkward shapes.
#include <cmath>
#include <stdexcept>

#include <gtest/gtest.h>

#include "kernels/common/bf16.h"
#include "kernels/distill_cosine/distill_cosine.h"
#include "support/kernels.h"

namespace {

using ks::distill::Normalize;
using ks::distill::Problem;

const ks::KernelSpec& distill_kernel() { return ks::testing::builtin_kernel("distill_cosine_loss"); }

// The kernel's defaults, with `overrides` applied: what the planner hands instantiate().
ks::Json params_json(const ks::Json& overrides) {
  ks::Json j = ks::Json::object();
  for (const auto& parameter : distill_kernel().parameters) j[parameter.name] = parameter.default_value;
  for (const auto& [key, value] : overrides.items()) j[key] = value;
  return j;
}

Problem small(std::int64_t tokens, std::int64_t hidden, std::int64_t vocab) {
  return Problem(ks::Parameters(params_json(
      {{"tokens", tokens}, {"hidden", hidden}, {"vocab", vocab}, {"dtype", "fp32"}, {"chunk_size", 4}, {"seed", 11}})));
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

// ---- the reference ----

// Central differences of reference().loss in each input of the student, against its gradients. The
// step is applied to the float inputs, so the divisor is the step the floats actually took.
void expect_gradients_match_finite_differences(const Problem& p) {
  const ks::distill::Inputs inputs = ks::distill::make_inputs(p);
  const ks::distill::Result analytic = ks::distill::reference(p, inputs);
  const auto numeric = [&](std::vector<float> ks::distill::Inputs::*tensor) {
    std::vector<double> gradient;
    for (std::size_t i = 0; i < (inputs.*tensor).size(); ++i) {
      ks::distill::Inputs up = inputs, down = inputs;
      const float step = 1e-3f;
      (up.*tensor)[i] += step;
      (down.*tensor)[i] -= step;
      const double taken = static_cast<double>((up.*tensor)[i]) - (down.*tensor)[i];
      gradient.push_back((ks::distill::reference(p, up).loss - ks::distill::reference(p, down).loss) / taken);
    }
    return gradient;
  };
  EXPECT_LT(ks::distill::relative_error(numeric(&ks::distill::Inputs::xs), analytic.grad_xs), 1e-5);
  EXPECT_LT(ks::distill::relative_error(numeric(&ks::distill::Inputs::ws), analytic.grad_ws), 1e-5);
  if (p.bias) { EXPECT_LT(ks::distill::relative_error(numeric(&ks::distill::Inputs::bs), analytic.grad_bs), 1e-5); }
}

TEST(DistillReference, GradientsMatchFiniteDifferencesOfTheLoss) {
  Problem p = small(3, 6, 5);
  p.bias = true;
  p.temperature = 2.5;
  p.beta = 0.7;
  p.weight_hard_loss = 0.3;
  p.weight_soft_loss = 1.2;
  p.ignored_fraction = 0.4;
  expect_gradients_match_finite_differences(p);
  p.normalize = Normalize::valid_tokens;
  p.temperature = 0.5;
  p.bias = false;
  expect_gradients_match_finite_differences(p);
}

TEST(DistillReference, HardAndSoftTermsEachMatchFiniteDifferences) {
  // Each term alone, so a mistake in one cannot hide behind the other.
  Problem hard_only = small(2, 4, 7);
  hard_only.weight_soft_loss = 0;
  expect_gradients_match_finite_differences(hard_only);
  Problem soft_only = small(2, 4, 7);
  soft_only.weight_hard_loss = 0;
  soft_only.temperature = 3;
  expect_gradients_match_finite_differences(soft_only);
}

TEST(DistillReference, LossAtATinyShapeMatchesAPlainComputation) {
  // Student hidden 1: each logit is one product, so the loss is easy to write out.
  Problem p = small(2, 2, 3);
  p.bias = true;
  p.temperature = 2;
  const ks::distill::Inputs in = ks::distill::make_inputs(p);
  double hard = 0, soft = 0;
  for (int i = 0; i < 2; ++i) {
    std::vector<double> s(3), t(3);
    for (int v = 0; v < 3; ++v) {
      s[v] = static_cast<double>(in.xs[i]) * in.ws[v] + in.bs[v];
      t[v] = static_cast<double>(in.xt[2 * i]) * in.wt[2 * v] +
             static_cast<double>(in.xt[2 * i + 1]) * in.wt[2 * v + 1] + in.bt[v];
    }
    const double log_sum_exp = std::log(std::exp(s[0]) + std::exp(s[1]) + std::exp(s[2]));
    if (in.targets[i] != p.ignore_index) hard += log_sum_exp - s[in.targets[i]];
    // The temperature divides both rows, which leaves their cosine unchanged.
    soft += p.beta * (1 - dot(s, t) / std::sqrt(dot(s, s) * dot(t, t)));
  }
  const double expected = p.weight_hard_loss * hard / 2 + p.weight_soft_loss * soft / 2;
  EXPECT_NEAR(ks::distill::reference(p, in).loss, expected, 1e-12 * std::fabs(expected));
}

TEST(DistillReference, NormalizeDividesByTokensOrByLabelledTokens) {
  Problem p = small(40, 4, 9);
  p.ignored_fraction = 0.5;
  const ks::distill::Inputs in = ks::distill::make_inputs(p);
  const double labelled =
      std::count_if(in.targets.begin(), in.targets.end(), [&](std::int64_t y) { return y != p.ignore_index; });
  ASSERT_GT(labelled, 0);
  ASSERT_LT(labelled, 40);
  const double by_tokens = ks::distill::reference(p, in).loss;
  p.normalize = Normalize::valid_tokens;
  const double by_labelled = ks::distill::reference(p, in).loss;
  EXPECT_NEAR(by_labelled, by_tokens * 40 / labelled, 1e-12 * by_labelled);
}

TEST(DistillReference, AllTargetsIgnoredDividesByOneNotZero) {
  Problem p = small(5, 4, 6);
  p.ignored_fraction = 1;
  p.normalize = Normalize::valid_tokens;
  const ks::distill::Result r = ks::distill::reference(p, ks::distill::make_inputs(p));
  EXPECT_TRUE(std::isfinite(r.loss));
  EXPECT_GT(r.loss, 0);
}

TEST(DistillReference, RelativeErrorIsTheNormOfTheDifferenceOverTheNormOfTheReference) {
  EXPECT_DOUBLE_EQ(ks::distill::relative_error({3, 4}, {3, 4}), 0);
  EXPECT_DOUBLE_EQ(ks::distill::relative_error({3, 0}, {0, 4}), 5.0 / 4.0);
  EXPECT_TRUE(std::isnan(ks::distill::relative_error({NAN, 1}, {1, 1})));
  EXPECT_THROW(ks::distill::relative_error({1}, {1, 2}), std::invalid_argument);
}

// ---- the input generator ----

TEST(DistillInputs, AreAPureFunctionOfTheSeed) {
  Problem p = small(6, 8, 10);
  p.bias = true;
  const auto a = ks::distill::make_inputs(p), b = ks::distill::make_inputs(p);
  EXPECT_EQ(a.xs, b.xs);
  EXPECT_EQ(a.ws, b.ws);
  EXPECT_EQ(a.xt, b.xt);
  EXPECT_EQ(a.wt, b.wt);
  EXPECT_EQ(a.bs, b.bs);
  EXPECT_EQ(a.bt, b.bt);
  EXPECT_EQ(a.targets, b.targets);
  p.seed = 12;
  const auto c = ks::distill::make_inputs(p);
  EXPECT_NE(a.xs, c.xs);
  EXPECT_NE(a.ws, c.ws);
  EXPECT_NE(a.targets, c.targets);
}

TEST(DistillInputs, FollowLigersBenchmarkDistributions) {
  Problem p = small(500, 16, 37);
  p.bias = true;
  p.ignored_fraction = 0.3;
  const auto in = ks::distill::make_inputs(p);
  ASSERT_EQ(in.xs.size(), 500u * 8);
  ASSERT_EQ(in.ws.size(), 37u * 8);
  ASSERT_EQ(in.xt.size(), 500u * 16);
  ASSERT_EQ(in.wt.size(), 37u * 16);
  ASSERT_EQ(in.bs.size(), 37u);
  for (float x : in.xs) ASSERT_TRUE(x >= 0 && x < 1);
  for (float x : in.xt) ASSERT_TRUE(x >= 0 && x < 1);
  for (float w : in.ws) ASSERT_LE(std::fabs(w), 1 / std::sqrt(8.0));
  for (float w : in.wt) ASSERT_LE(std::fabs(w), 1 / std::sqrt(16.0));
  for (float b : in.bs) ASSERT_LE(std::fabs(b), 1 / std::sqrt(8.0));
  int ignored = 0;
  for (std::int64_t y : in.targets) {
    if (y == p.ignore_index) {
      ++ignored;
      continue;
    }
    ASSERT_GE(y, 0);
    ASSERT_LT(y, 37);
  }
  EXPECT_GT(ignored, 100);  // 150 expected
  EXPECT_LT(ignored, 200);
  p.bias = false;
  EXPECT_TRUE(ks::distill::make_inputs(p).bs.empty());
}

TEST(DistillInputs, Bf16RoundsTheSameValues) {
  Problem p = small(4, 8, 9);
  const auto fp32 = ks::distill::make_inputs(p);
  p.bf16 = true;
  const auto bf16 = ks::distill::make_inputs(p);
  for (std::size_t i = 0; i < fp32.wt.size(); ++i) ASSERT_EQ(bf16.wt[i], ks::round_to_bf16(fp32.wt[i]));
  for (std::size_t i = 0; i < fp32.xs.size(); ++i) ASSERT_EQ(bf16.xs[i], ks::round_to_bf16(fp32.xs[i]));
  EXPECT_NE(fp32.wt, bf16.wt);
  EXPECT_EQ(fp32.targets, bf16.targets);
}

// ---- the schema ----

TEST(DistillSchema, ValidateRequiresAnEvenHiddenAndAChunkSizeOrAuto) {
  const ks::KernelSpec& spec = distill_kernel();
  EXPECT_FALSE(spec.problem_with(params_json({})).has_value());
  EXPECT_FALSE(spec.problem_with(params_json({{"chunk_size", "auto"}})).has_value());
  const auto odd = spec.problem_with(params_json({{"hidden", 4095}}));
  ASSERT_TRUE(odd.has_value());
  EXPECT_EQ(odd->rfind("hidden: ", 0), 0u) << *odd;
  const auto fast = spec.problem_with(params_json({{"chunk_size", "fast"}}));
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(fast->rfind("chunk_size: ", 0), 0u) << *fast;
  EXPECT_TRUE(spec.problem_with(params_json({{"chunk_size", 0}})).has_value());
  EXPECT_EQ(Problem(ks::Parameters(params_json({{"chunk_size", "auto"}}))).chunk_size, 0);
  EXPECT_THROW(spec.instantiate("cpu", params_json({{"hidden", 7}})), std::invalid_argument);
}

TEST(DistillSchema, ListsModesAndImplementations) {
  const ks::KernelSpec& spec = distill_kernel();
  EXPECT_EQ(spec.name, "distill_cosine_loss");
  EXPECT_EQ(spec.modes, (std::vector<std::string>{"forward", "backward", "full", "no-grad-forward"}));
  for (const char* name : {"fused", "naive"}) EXPECT_EQ(spec.implementation(name)->backend, ks::Backend::cuda);
  EXPECT_EQ(spec.implementation("cpu")->backend, ks::Backend::cpu);
  EXPECT_EQ(spec.parameter("chunk_size")->special, std::vector<ks::Json>{"auto"});
  EXPECT_THROW(spec.instantiate("triton", params_json({{"tokens", 4}, {"vocab", 8}, {"hidden", 4}})),
               std::invalid_argument);
}

TEST(DistillSchema, CppImplementationsRefuseTorchRandInputsWhichStillHaveAWorkCount) {
  const ks::KernelSpec& spec = distill_kernel();
  EXPECT_EQ(spec.parameter("inputs")->default_value, "counter");
  const ks::Json torch_rand = params_json({{"tokens", 4}, {"hidden", 4}, {"vocab", 8}, {"inputs", "torch_rand"}});
  EXPECT_FALSE(spec.problem_with(torch_rand).has_value());
  try {
    spec.instantiate("cpu", torch_rand);
    FAIL() << "the cpu implementation accepted inputs torch_rand";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("only the Python implementations (torch, liger) reproduce it"),
              std::string::npos)
        << error.what();
  }
  EXPECT_TRUE(spec.problem_with(params_json({{"inputs", "numpy"}})).has_value());
  // The work of a point does not depend on how its inputs are drawn.
  const ks::Json counter = params_json({{"tokens", 4}, {"hidden", 4}, {"vocab", 8}});
  EXPECT_EQ(spec.work_of(torch_rand, "full").flops, spec.work_of(counter, "full").flops);
}

TEST(DistillSchema, FlopsAtTheDefaultShapeAreThoseOfTheFourProducts) {
  const ks::KernelSpec& spec = distill_kernel();
  const ks::Json defaults = params_json({});  // tokens 1024, hidden 4096, vocab 128256
  // 2·1024·128256·(2048 + 4096 + 2048 + 2048) = 2.69 TFLOP
  EXPECT_NEAR(spec.work_of(defaults, "full").flops / 1e12, 2.69, 0.005);
  EXPECT_EQ(spec.work_of(defaults, "forward").flops, spec.work_of(defaults, "full").flops);
  EXPECT_LT(spec.work_of(defaults, "no-grad-forward").flops, spec.work_of(defaults, "forward").flops);
  // Backward scales the gradients by an incoming gradient of 1: every implementation skips it, as
  // Liger does, so it moves and computes nothing, and full is forward's work.
  EXPECT_EQ(spec.work_of(defaults, "backward").flops, 0);
  EXPECT_EQ(spec.work_of(defaults, "backward").bytes, 0);
  EXPECT_THROW(spec.work_of(defaults, "sideways"), std::invalid_argument);
  EXPECT_EQ(spec.work_of(defaults, "full").bytes, spec.work_of(defaults, "forward").bytes);
}

// ---- the cpu implementation against the reference ----

struct CpuCase {
  std::string name;
  ks::Json overrides;
  friend void PrintTo(const CpuCase& c, std::ostream* out) { *out << c.name << " " << c.overrides.dump(); }
};

class DistillCpu : public ::testing::TestWithParam<CpuCase> {};

TEST_P(DistillCpu, MatchesTheReferenceInEveryMode) {
  const ks::KernelSpec& spec = distill_kernel();
  ks::Json params = params_json({{"tokens", 13}, {"hidden", 24}, {"vocab", 37}, {"chunk_size", 4}, {"seed", 5}});
  for (const auto& [key, value] : GetParam().overrides.items()) params[key] = value;
  auto instance = spec.instantiate("cpu", params);
  for (const std::string mode : {"forward", "backward", "full", "no-grad-forward"}) {
    const ks::BoundMode bound = spec.bind(*instance, mode);
    bound.run();
    const ks::CheckResult result = bound.check();
    EXPECT_TRUE(result.passed) << mode << ": " << result.detail;
  }
}

INSTANTIATE_TEST_SUITE_P(
    SmallShapes, DistillCpu,
    ::testing::Values(CpuCase{"defaults_bf16", {}}, CpuCase{"fp32", {{"dtype", "fp32"}}},
                      CpuCase{"vocab131_bias", {{"vocab", 131}, {"bias", true}}},
                      CpuCase{"temperature", {{"temperature", 2.5}, {"beta", 0.9}}},
                      CpuCase{"ignored_tokens", {{"ignored_fraction", 0.35}, {"ignore_index", -1}}},
                      CpuCase{"valid_tokens",
                              {{"ignored_fraction", 0.35}, {"normalize", "valid_tokens"}, {"bias", true}}},
                      CpuCase{"chunk_1", {{"chunk_size", 1}, {"tokens", 7}}},
                      CpuCase{"chunk_auto", {{"chunk_size", "auto"}}},
                      CpuCase{"chunk_larger_than_tokens", {{"chunk_size", 1024}, {"tokens", 5}}},
                      CpuCase{"weights", {{"weight_hard_loss", 0.2}, {"weight_soft_loss", 1.5}, {"temperature", 0.7}}},
                      CpuCase{"hard_only", {{"weight_soft_loss", 0.0}}},
                      CpuCase{"soft_only", {{"weight_hard_loss", 0.0}, {"bias", true}}}),
    [](const ::testing::TestParamInfo<CpuCase>& info) { return info.param.name; });

TEST(DistillCpu, ChecksAtAReducedShapeWhenTheShapeIsLarge) {
  const ks::KernelSpec& spec = distill_kernel();
  // tokens·vocab·hidden = 2^29: above the limit for a full reference, cheap to set up.
  auto instance =
      spec.instantiate("cpu", params_json({{"tokens", 512}, {"hidden", 1024}, {"vocab", 1024}, {"seed", 1}}));
  const ks::CheckResult result = instance->bind("no-grad-forward").check();
  EXPECT_TRUE(result.passed) << result.detail;
  EXPECT_NE(result.detail.find("reduced shape"), std::string::npos) << result.detail;
}

TEST(DistillCpu, RejectsAnUnknownMode) {
  auto instance = distill_kernel().instantiate("cpu", params_json({{"tokens", 2}, {"hidden", 4}, {"vocab", 3}}));
  EXPECT_THROW(instance->bind("sideways"), std::invalid_argument);
  EXPECT_EQ(instance->device_bytes(), 0u);
}

}  // namespace
