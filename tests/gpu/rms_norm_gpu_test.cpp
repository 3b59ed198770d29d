// On a GPU: rms_norm's CUDA implementation against the float64 reference and the CPU implementation
// (its check compares both, and the device's inputs with the host's bit for bit) in every mode,
// dtype and casting mode, at awkward shapes and at Liger's benchmark shapes; then the GB/s of each
// mode at large shapes, timed with do_bench. Skipped where no GPU is present.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <tuple>

#include "env/environment.h"
#include "kernels/kernel.h"
#include "measure/do_bench.h"
#include "support/kernels.h"

namespace ks {
namespace {

const KernelSpec& rms_norm() { return ks::testing::builtin_kernel("rms_norm"); }

Json params(std::int64_t tokens, std::int64_t hidden, const std::string& dtype, const std::string& casting_mode,
            double offset = 0.0) {
  return {{"tokens", tokens}, {"hidden", hidden}, {"dtype", dtype},
          {"eps", 1e-6},      {"offset", offset}, {"casting_mode", casting_mode},
          {"seed", 11}};
}

// Every mode of one instance, each run and then checked; `what` names the point in messages.
void expect_every_mode_passes(const Json& p, const std::string& what) {
  auto instance = rms_norm().instantiate("cuda", p);
  EXPECT_GT(instance->device_bytes(), 0u);
  EXPECT_NE(instance->stream(), nullptr);
  for (const std::string mode : {"forward", "backward", "full"}) {
    const BoundMode bound = rms_norm().bind(*instance, mode);
    bound.run();
    const CheckResult check = bound.check();
    EXPECT_TRUE(check.passed) << what << " " << mode << ": " << check.detail;
    EXPECT_NE(check.detail.find("inputs equal to the host's bit for bit"), std::string::npos) << check.detail;
  }
}

TEST(GpuRmsNorm, MatchesTheCpuAtAwkwardShapes) {
  SKIP_WITHOUT_GPU();
  // hidden 1; odd; no multiple of 8 (scalar loads); multiples of 8 past a power of two; rows longer
  // than the registers hold (their tail read twice); hidden 40000, whose dw partials need more than
  // 48 KiB of shared memory, and 65536, Liger's largest, whose partials do not fit in a block's
  // shared memory and go to global memory; one token, and more row groups than blocks. Backward's
  // pipelined kernel takes rows of 513 to 2048 16-byte vectors, two or four a thread: 4104, 8192 and
  // 16384 wide bf16 rows (and 4104 fp32), more rows than blocks among them.
  const std::tuple<int, int> shapes[] = {{1, 1},     {37, 1},    {1, 7},      {3, 13},    {70, 100},
                                         {5, 1001},  {2, 4104},  {300, 264},  {3, 20000}, {4, 40000},
                                         {3, 65536}, {1000, 24}, {200, 8192}, {3, 16384}};
  for (const auto& [tokens, hidden] : shapes)
    for (const std::string dtype : {"bf16", "fp32"})
      for (const std::string casting : {"llama", "gemma", "none"})
        for (const double offset : {0.0, 1.0})
          expect_every_mode_passes(params(tokens, hidden, dtype, casting, offset),
                                   std::to_string(tokens) + "x" + std::to_string(hidden) + " " + dtype + " " + casting +
                                       " offset " + std::to_string(offset));
}

// benchmark_rms_norm.py: M = 2048 rows, hidden 1024 to 32768, bf16, eps 1e-6, LigerRMSNorm's
// defaults (llama, offset 0); Gemma's settings beside them.
TEST(GpuRmsNorm, MatchesTheCpuAtLigersBenchmarkShapes) {
  SKIP_WITHOUT_GPU();
  for (int hidden = 1024; hidden <= 32768; hidden *= 2) {
    expect_every_mode_passes(params(2048, hidden, "bf16", "llama"), "2048x" + std::to_string(hidden) + " llama");
    expect_every_mode_passes(params(2048, hidden, "bf16", "gemma", 1.0), "2048x" + std::to_string(hidden) + " gemma");
  }
}

// GB/s of each mode (the least bytes the mode moves, over do_bench's median) at large shapes, for
// the record of the GPU it ran on.
TEST(GpuRmsNorm, Bandwidth) {
  SKIP_WITHOUT_GPU();
  const Protocol protocol = resolve_protocol(ProtocolSpec{}, Backend::cuda);
  const GpuInfo gpu = read_gpu_info(0);
  for (const auto& [tokens, hidden] : {std::tuple{4096, 4096}, std::tuple{4096, 8192}, std::tuple{2048, 32768}}) {
    const Json p = params(tokens, hidden, "bf16", "llama");
    auto instance = rms_norm().instantiate("cuda", p);
    std::string line =
        "rms_norm cuda bf16 llama " + std::to_string(tokens) + "x" + std::to_string(hidden) + " on " + gpu.name + ":";
    for (const std::string mode : {"forward", "backward", "full"}) {
      const BoundMode bound = rms_norm().bind(*instance, mode);
      const Timing timing = do_bench(bound, instance->stream(), protocol);
      const Statistics stats = summarize(timing.samples_ns);
      const double gbps = rms_norm().work_of(p, mode).bytes / stats.median_ns;
      EXPECT_GT(gbps, 100.0) << mode;
      char figures[128];
      std::snprintf(figures, sizeof figures, " %s %.1f us %.0f GB/s;", mode.c_str(), stats.median_ns / 1e3, gbps);
      line += figures;
      EXPECT_TRUE(bound.check().passed) << mode;
    }
    std::printf("%s\n", line.c_str());
  }
}

}  // namespace
}  // namespace ks
