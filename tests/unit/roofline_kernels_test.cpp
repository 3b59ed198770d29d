// The kernels whose rates kernelsweep calibrate measures: stream (copy, triad), fma_chains and
// peak_flops. Their work counts are exact, their CPU implementations compute what they claim (a
// check that catches a wrong element), and peak_flops refuses to run where CUDA is not built.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "kernels/common/cores.h"
#include "kernels/stream/stream.h"
#include "support/kernels.h"

namespace {

using ks::Json;

ks::Work work_of(const std::string& kernel, const Json& params) {
  const ks::KernelSpec& spec = ks::testing::builtin_kernel(kernel);
  Json full = Json::object();
  for (const ks::ParamSpec& p : spec.parameters)
    full[p.name] = params.contains(p.name) ? params.at(p.name) : p.default_value;
  return spec.work_of(full, "forward");
}

// The check of one forward call of an implementation on `params` (the other parameters at their defaults).
ks::CheckResult check_of_one_call(const std::string& kernel, const std::string& implementation, const Json& params) {
  const ks::KernelSpec& spec = ks::testing::builtin_kernel(kernel);
  Json full = Json::object();
  for (const ks::ParamSpec& p : spec.parameters)
    full[p.name] = params.contains(p.name) ? params.at(p.name) : p.default_value;
  const auto instance = spec.instantiate(implementation, full);
  const ks::BoundMode bound = instance->bind("forward");
  bound.run();
  return bound.check();
}

TEST(StreamKernel, CountsTheBytesOfEachArrayAndTheTriadsArithmetic) {
  const double elements = 64.0 * (1 << 18);  // 64 MiB of fp32
  const ks::Work copy = work_of("stream", {{"op", "copy"}, {"mib", 64}});
  EXPECT_EQ(copy.bytes, 2 * 4 * elements);
  EXPECT_EQ(copy.flops, 0);
  const ks::Work triad = work_of("stream", {{"op", "triad"}, {"mib", 64}});
  EXPECT_EQ(triad.bytes, 3 * 4 * elements);
  EXPECT_EQ(triad.flops, 2 * elements);
}

TEST(StreamKernel, CpuCopyAndTriadPassTheirChecks) {
  for (const char* op : {"copy", "triad"}) {
    const ks::CheckResult result = check_of_one_call("stream", "cpu", {{"op", op}, {"mib", 4}, {"seed", 5}});
    EXPECT_TRUE(result.passed) << op << ": " << result.detail;
  }
}

// The check reads the elements it compares: a wrong first or last element fails it.
TEST(StreamKernel, TheCheckFailsOnAWrongElement) {
  const ks::stream::Problem p(ks::Parameters(Json{{"op", "triad"}, {"mib", 1}, {"seed", 3}}));
  const auto right = [&](std::int64_t i) {
    const auto u = static_cast<std::uint64_t>(i);
    return p.b(u) + ks::stream::kScalar * p.c(u);
  };
  EXPECT_TRUE(ks::stream::check_sampled(p, right).passed);
  const auto wrong_last = [&](std::int64_t i) { return i == p.elements - 1 ? right(i) + 1e-3f : right(i); };
  EXPECT_FALSE(ks::stream::check_sampled(p, wrong_last).passed);
  const auto never_written = [](std::int64_t) { return 0.0f; };
  EXPECT_FALSE(ks::stream::check_sampled(p, never_written).passed);
}

TEST(FmaChainsKernel, CountsTwoFlopsForEveryStepOfEveryChainOnEveryThread) {
  // 512 bytes of chains a thread: 128 fp32 lanes or 64 fp64 ones.
  EXPECT_EQ(work_of("fma_chains", {{"dtype", "fp32"}, {"iterations", 1000}, {"threads", 3}}).flops,
            2.0 * 1000 * 3 * 128);
  EXPECT_EQ(work_of("fma_chains", {{"dtype", "fp64"}, {"iterations", 1000}, {"threads", 3}}).flops,
            2.0 * 1000 * 3 * 64);
  EXPECT_EQ(work_of("fma_chains", {{"dtype", "fp64"}, {"iterations", 1000}, {"threads", 3}}).bytes, 0);
  // threads 0: every core this process may use.
  EXPECT_EQ(work_of("fma_chains", {{"dtype", "fp32"}, {"iterations", 10}, {"threads", 0}}).flops,
            2.0 * 10 * ks::usable_cores() * 128);
}

TEST(FmaChainsKernel, EachDtypePassesItsCheck) {
  for (const char* dtype : {"fp32", "fp64"}) {
    const ks::CheckResult result =
        check_of_one_call("fma_chains", "cpu", {{"dtype", dtype}, {"iterations", 20000}, {"threads", 2}});
    EXPECT_TRUE(result.passed) << dtype << ": " << result.detail;
  }
}

TEST(PeakFlopsKernel, CountsAProductsFlopsAndItsOperandsBytes) {
  const double n = 4096;
  const ks::Work bf16 = work_of("peak_flops", {{"dtype", "bf16"}, {"size", 4096}});
  EXPECT_EQ(bf16.flops, 2 * n * n * n);
  EXPECT_EQ(bf16.bytes, 3 * 2 * n * n);
  EXPECT_EQ(work_of("peak_flops", {{"dtype", "fp8"}, {"size", 4096}}).bytes, (1 + 1 + 2) * n * n);  // bf16 result
  EXPECT_EQ(work_of("peak_flops", {{"dtype", "fp64"}, {"size", 4096}}).bytes, 3 * 8 * n * n);
  EXPECT_EQ(work_of("peak_flops", {{"dtype", "tf32"}, {"size", 4096}}).bytes, 3 * 4 * n * n);
}

TEST(PeakFlopsKernel, HasOnlyACudaImplementation) {
  const ks::KernelSpec& spec = ks::testing::builtin_kernel("peak_flops");
  ASSERT_EQ(spec.implementations.size(), 1u);
  EXPECT_EQ(spec.implementations[0].backend, ks::Backend::cuda);
}

}  // namespace
