// distill_cosine_loss's CUDA implementations against the CPU reference at small shapes (V not a
// multiple of the tile sizes, BT not a multiple of the chunk, bias, T ≠ 1, ignored targets, both
// normalisations), and fused against naive at the default shape (Liger's benchmark: 1024 tokens,
// hidden 4096, vocab 128256, bf16). Built with CUDA only; skipped without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "kernels/distill_cosine/cuda_distill.h"
#include "support/kernels.h"

namespace {

using ks::distill::Normalize;
using ks::distill::Problem;

int compute_capability_major() {
  int device = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return 0;
  return major;
}

// The kernel's defaults, with `overrides` applied.
Problem problem(const ks::Json& overrides) {
  ks::Json params = ks::Json::object();
  for (const auto& parameter : ks::testing::builtin_kernel("distill_cosine_loss").parameters)
    params[parameter.name] = parameter.default_value;
  for (const auto& [key, value] : overrides.items()) params[key] = value;
  return Problem(ks::Parameters(params));
}

Problem small(std::int64_t tokens, std::int64_t hidden, std::int64_t vocab, std::int64_t chunk) {
  return problem({{"tokens", tokens}, {"hidden", hidden}, {"vocab", vocab}, {"chunk_size", chunk}});
}

// The small shapes: each varies what the fused kernels could get wrong.
std::vector<Problem> small_shapes() {
  std::vector<Problem> shapes;
  Problem a = small(37, 64, 4099, 16);  // V odd (scalar row path), BT not a multiple of the chunk
  a.bias = true;
  a.temperature = 2.0;
  a.ignored_fraction = 0.3;
  a.seed = 11;
  shapes.push_back(a);
  Problem b = small(64, 128, 4096, 64);  // vectorised row path, valid_tokens, T < 1
  b.normalize = Normalize::valid_tokens;
  b.temperature = 0.7;
  b.ignored_fraction = 0.25;
  b.seed = 12;
  shapes.push_back(b);
  Problem c = small(50, 96, 4099, 1024);  // one chunk holding every token; bias, valid_tokens, no ignored
  c.bias = true;
  c.normalize = Normalize::valid_tokens;
  c.weight_hard_loss = 0.3;
  c.weight_soft_loss = 0.9;
  c.beta = 0.8;
  c.seed = 13;
  shapes.push_back(c);
  Problem d = small(33, 64, 4099, 8);  // fp32 inputs
  d.bf16 = false;
  d.bias = true;
  d.temperature = 1.5;
  d.ignored_fraction = 0.2;
  d.seed = 14;
  shapes.push_back(d);
  return shapes;
}

std::string describe(const Problem& p) {
  return "BT=" + std::to_string(p.tokens) + " H=" + std::to_string(p.hidden) + " V=" + std::to_string(p.vocab) +
         " chunk=" + std::to_string(p.chunk_size) + (p.bf16 ? " bf16" : " fp32") + (p.bias ? " bias" : "") +
         " T=" + std::to_string(p.temperature) + (p.normalize == Normalize::tokens ? " tokens" : " valid_tokens");
}

void expect_checks_pass(ks::Instance& instance, const Problem& p, const std::string& what) {
  for (const std::string mode : {"forward", "full", "no-grad-forward", "backward"}) {
    const ks::CheckResult result = instance.bind(mode).check();
    std::printf("[%s %s] %s\n", what.c_str(), describe(p).c_str(), result.detail.c_str());
    EXPECT_TRUE(result.passed) << what << " " << describe(p) << ": " << result.detail;
  }
}

TEST(DistillCosineGpu, DeviceInputsEqualHostInputsBitForBit) {
  SKIP_WITHOUT_GPU();
  for (const Problem& p : small_shapes()) {
    auto instance = ks::distill::make_naive_instance(p);
    const ks::distill::Inputs device = ks::distill::download_inputs(*instance);
    const ks::distill::Inputs host = ks::distill::make_inputs(p);
    EXPECT_EQ(device.xs, host.xs) << describe(p);
    EXPECT_EQ(device.ws, host.ws) << describe(p);
    EXPECT_EQ(device.xt, host.xt) << describe(p);
    EXPECT_EQ(device.wt, host.wt) << describe(p);
    EXPECT_EQ(device.bs, host.bs) << describe(p);
    EXPECT_EQ(device.bt, host.bt) << describe(p);
    EXPECT_EQ(device.targets, host.targets) << describe(p);
  }
}

TEST(DistillCosineGpu, FusedTwoPassMatchesCpuReference) {
  SKIP_WITHOUT_GPU();
  for (const Problem& p : small_shapes()) {
    auto instance = ks::distill::make_fused_instance(p, {ks::distill::RowKernel::two_pass});
    expect_checks_pass(*instance, p, "fused two-pass");
  }
}

TEST(DistillCosineGpu, FusedClusterMatchesCpuReference) {
  SKIP_WITHOUT_GPU();
  if (compute_capability_major() < 9) GTEST_SKIP() << "the cluster row kernel needs sm_90";
  for (const Problem& p : small_shapes()) {
    auto instance = ks::distill::make_fused_instance(p, {ks::distill::RowKernel::cluster});
    expect_checks_pass(*instance, p, "fused cluster");
  }
}

// The row kernels this GPU can run: the cluster kernel needs sm_90.
std::vector<ks::distill::RowKernel> row_kernels_here() {
  std::vector<ks::distill::RowKernel> kernels{ks::distill::RowKernel::two_pass};
  if (compute_capability_major() >= 9) kernels.push_back(ks::distill::RowKernel::cluster);
  return kernels;
}

// Rows whose packs split unevenly over the cluster's 8 blocks: vocab a multiple of the 16-byte pack
// (8 bf16, 4 fp32) but not of 8 packs, so the last block's segment is shorter; and a vocab so small
// that some blocks of the cluster hold nothing.
std::vector<Problem> uneven_segment_shapes() {
  std::vector<Problem> shapes = small_shapes();
  for (Problem& p : shapes) p.vocab = p.bf16 ? 4104 : 4100;
  Problem tiny = small(24, 32, 40, 16);
  tiny.ignored_fraction = 0.2;
  tiny.seed = 15;
  shapes.push_back(tiny);
  return shapes;
}

TEST(DistillCosineGpu, RowKernelsMatchCpuReferenceWhereSegmentsAreUneven) {
  SKIP_WITHOUT_GPU();
  for (const ks::distill::RowKernel kernel : row_kernels_here()) {
    for (const Problem& p : uneven_segment_shapes()) {
      auto instance = ks::distill::make_fused_instance(p, {kernel});
      expect_checks_pass(*instance, p, std::string("fused ") + ks::distill::to_string(kernel));
    }
  }
}

// Teacher sub-chunks of a third of the chunk: sub-chunks that do not divide the chunk, and more
// sub-chunks than teacher buffers, so that the overlap schedule reuses each buffer.
ks::distill::FusedOptions with_sub_chunks(const Problem& p, ks::distill::RowKernel row_kernel,
                                          ks::distill::Schedule schedule) {
  ks::distill::FusedOptions options;
  options.row_kernel = row_kernel;
  options.schedule = schedule;
  options.teacher_rows = std::max<std::int64_t>(std::min(p.chunk_size, p.tokens) / 3, 1);
  return options;
}

std::string describe(const ks::distill::FusedOptions& o) {
  return std::string(ks::distill::to_string(o.row_kernel)) + " " + ks::distill::to_string(o.schedule) +
         " teacher_rows=" + std::to_string(o.teacher_rows);
}

TEST(DistillCosineGpu, FusedSerialWithTeacherSubChunksMatchesCpuReference) {
  SKIP_WITHOUT_GPU();
  for (const Problem& p : small_shapes()) {
    const auto options = with_sub_chunks(p, ks::distill::RowKernel::two_pass, ks::distill::Schedule::serial);
    auto instance = ks::distill::make_fused_instance(p, options);
    expect_checks_pass(*instance, p, "fused " + describe(options));
  }
}

TEST(DistillCosineGpu, FusedOverlapMatchesCpuReference) {
  SKIP_WITHOUT_GPU();
  for (const ks::distill::RowKernel kernel : row_kernels_here()) {
    for (const Problem& p : small_shapes()) {
      const auto options = with_sub_chunks(p, kernel, ks::distill::Schedule::overlap);
      auto instance = ks::distill::make_fused_instance(p, options);
      expect_checks_pass(*instance, p, "fused " + describe(options));
    }
  }
}

// Repeated passes reuse the teacher buffers and events across run() calls: still correct after many.
TEST(DistillCosineGpu, FusedOverlapGivesTheSameLossOnEveryPass) {
  SKIP_WITHOUT_GPU();
  const Problem p = small_shapes().front();
  auto instance = ks::distill::make_fused_instance(
      p, with_sub_chunks(p, ks::distill::RowKernel::two_pass, ks::distill::Schedule::overlap));
  const ks::BoundMode full = instance->bind("full");
  const ks::CheckResult first = full.check();
  ASSERT_TRUE(first.passed) << first.detail;
  for (int pass = 0; pass < 20; ++pass) full.run();
  const ks::CheckResult later = full.check();
  EXPECT_TRUE(later.passed) << later.detail;
}

// chunk_size auto with every option automatic holds at most 3.0 GB at 1024 tokens and 3.5 GB at 8192.
TEST(DistillCosineGpu, AutomaticConfigurationStaysWithinTheMemoryBudget) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::pair<std::int64_t, double>> budgets{{1024, 3.0e9}, {8192, 3.5e9}};
  for (const auto& [tokens, budget_bytes] : budgets) {
    const Problem p = problem({{"tokens", tokens}, {"chunk_size", "auto"}});
    auto instance = ks::distill::make_fused_instance(p);
    const double held = static_cast<double>(instance->device_bytes());
    std::printf("[fused auto, %lld tokens] %.3f GB held (budget %.1f GB)\n", static_cast<long long>(tokens),
                held * 1e-9, budget_bytes * 1e-9);
    EXPECT_LE(held, budget_bytes) << tokens << " tokens";
  }
}

TEST(DistillCosineGpu, NaiveMatchesCpuReference) {
  SKIP_WITHOUT_GPU();
  for (const Problem& p : small_shapes()) {
    auto instance = ks::distill::make_naive_instance(p);
    expect_checks_pass(*instance, p, "naive");
  }
}

TEST(DistillCosineGpu, FusedMatchesNaiveAtTheDefaultShape) {
  SKIP_WITHOUT_GPU();
  const Problem p = problem({});  // 1024 tokens, hidden 4096, vocab 128256, bf16
  auto instance = ks::distill::make_fused_instance(p);
  const ks::CheckResult result = instance->bind("full").check();
  std::printf("[fused auto, default shape] %s\n", result.detail.c_str());
  EXPECT_TRUE(result.passed) << result.detail;
}

}  // namespace
