// On a GPU: the cuBLASLt gemm against its reference, the do_bench protocol's CUDA path, and what the
// environment reads off the device. Skipped where no GPU is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "env/environment.h"
#include "kernels/kernel.h"
#include "measure/do_bench.h"
#include "measure/protocol.h"
#include "measure/timer.h"
#include "support/kernels.h"

namespace ks {
namespace {

const KernelSpec& gemm() { return ks::testing::builtin_kernel("gemm"); }

Json gemm_params(int m, int n, int k, const std::string& dtype) {
  return {{"M", m}, {"N", n}, {"K", k}, {"dtype", dtype}, {"seed", 7}, {"inputs", "counter"}};
}

TEST(GpuGemm, CublasLtAndCublasMatchTheReferenceAtOddShapes) {
  SKIP_WITHOUT_GPU();
  for (const std::string implementation : {"cublaslt", "cublas"}) {
    for (const std::string dtype : {"fp32", "bf16"}) {
      for (const auto& [m, n, k] : {std::tuple{33, 65, 129}, std::tuple{1, 4099, 17}, std::tuple{257, 3, 1031}}) {
        auto instance = gemm().instantiate(implementation, gemm_params(m, n, k, dtype));
        const BoundMode forward = gemm().bind(*instance, "forward");
        forward.run();
        const CheckResult check = forward.check();
        EXPECT_TRUE(check.passed) << implementation << " " << dtype << " " << m << "x" << n << "x" << k << ": "
                                  << check.detail;
        EXPECT_GT(instance->device_bytes(), 0u);
      }
    }
  }
}

TEST(GpuDoBench, CudaEventsProtocolKeepsEverySample) {
  SKIP_WITHOUT_GPU();
  auto instance = gemm().instantiate("cublaslt", gemm_params(2048, 2048, 2048, "bf16"));
  const Protocol protocol = resolve_protocol(ProtocolSpec{}, Backend::cuda);
  EXPECT_EQ(protocol.timer, "cuda_events");
  EXPECT_EQ(protocol.flush_bytes, 256ll << 20);
  const BoundMode forward = gemm().bind(*instance, "forward");
  const Timing timing = do_bench(forward, instance->stream(), protocol);
  ASSERT_EQ(static_cast<std::int64_t>(timing.samples_ns.size()), timing.n_repeat);
  EXPECT_GE(timing.n_warmup, 1);
  EXPECT_GT(timing.n_repeat, 10) << "a 2048^3 product takes well under 10 ms";
  for (double s : timing.samples_ns) EXPECT_GT(s, 0);
  const Statistics stats = summarize(timing.samples_ns);
  // 2·2048³ FLOP at the H200's bf16 rate (~800 TFLOP/s) is about 22 us; anything under 1 us means the
  // events did not bracket the work.
  EXPECT_GT(stats.median_ns, 1e3);
  EXPECT_TRUE(forward.check().passed);
  std::printf("cublaslt bf16 2048^3: median %.1f us, n_warmup %lld, n_repeat %lld\n", stats.median_ns / 1e3,
              static_cast<long long>(timing.n_warmup), static_cast<long long>(timing.n_repeat));
}

// The cold protocol on a GPU: the stream held and released every sample, the L2-sized flush, the SM
// clock read per sample (somewhere between a tenth of the device's peak and a little above it), and a
// verdict that says what the samples show: the goal met exactly when the noise came within it, else
// the timeout reached. How noisy the GPU is belongs to the device, not to this code: the figure is
// printed, and bench/gpu/noise_study.sh measures it per card (bench/results/noise_study-h200.md).
TEST(GpuCold, ReadsTheClockOfEverySampleAndSaysWhetherTheNoiseGoalWasMet) {
  SKIP_WITHOUT_GPU();
  auto instance = gemm().instantiate("cublaslt", gemm_params(2048, 2048, 2048, "bf16"));
  ProtocolSpec spec;
  spec.name = "cold";
  spec.cold.max_noise = 0.02;
  const Protocol protocol = resolve_protocol(spec, Backend::cuda, gpu_l2_cache_bytes());
  EXPECT_GT(protocol.flush_bytes, 1 << 20);
  EXPECT_LT(protocol.flush_bytes, 256ll << 20);
  const BoundMode forward = gemm().bind(*instance, "forward");
  const auto timer = make_timer(instance->stream(), protocol);
  const auto started = std::chrono::steady_clock::now();
  const Timing timing = time_point(forward, *timer, protocol);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_GE(timing.noise.goal_met, 0) << "a cold point always says whether it met its goal";
  EXPECT_EQ(timing.noise.goal_met == 1, timing.noise.noise <= spec.cold.max_noise) << "noise " << timing.noise.noise;
  if (timing.noise.goal_met == 0)
    EXPECT_GE(seconds, protocol.cold.timeout_s) << "only the timeout ends it short of the goal";
  ASSERT_EQ(timing.sample_sm_clock_mhz.size(), timing.samples_ns.size());
  const double peak = timer->default_sm_clock_mhz();
  for (const double mhz : timing.sample_sm_clock_mhz) {
    EXPECT_GT(mhz, 0.1 * peak);
    EXPECT_LT(mhz, 1.1 * peak);
  }
  const Statistics stats = summarize(timing.samples_ns);
  EXPECT_GT(stats.median_ns, 1e3);
  std::printf(
      "cold cublaslt bf16 2048^3: median %.1f us over %zu samples, noise %.4f, %lld dropped, SM clock %.0f-%.0f MHz "
      "(peak %.0f), flush %lld bytes\n",
      stats.median_ns / 1e3, timing.samples_ns.size(), timing.noise.noise,
      static_cast<long long>(timing.noise.samples_dropped),
      *std::min_element(timing.sample_sm_clock_mhz.begin(), timing.sample_sm_clock_mhz.end()),
      *std::max_element(timing.sample_sm_clock_mhz.begin(), timing.sample_sm_clock_mhz.end()), peak,
      static_cast<long long>(protocol.flush_bytes));
}

// The graph protocol on a GPU: the calls captured on the implementation's stream and replayed; its
// median within a quarter of do_bench's for a product long enough that launch overhead is small.
TEST(GpuGraph, ReplaysACapturedProductAtDoBenchsSpeed) {
  SKIP_WITHOUT_GPU();
  auto instance = gemm().instantiate("cublaslt", gemm_params(4096, 4096, 4096, "bf16"));
  const BoundMode forward = gemm().bind(*instance, "forward");
  ProtocolSpec graph_spec;
  graph_spec.name = "graph";
  const Timing graph = time_point(forward, instance->stream(), resolve_protocol(graph_spec, Backend::cuda));
  graph_spec.flush_bytes = 256ll << 20;
  const Timing flushed = time_point(forward, instance->stream(), resolve_protocol(graph_spec, Backend::cuda));
  const Timing plain = time_point(forward, instance->stream(), resolve_protocol(ProtocolSpec{}, Backend::cuda));
  ASSERT_EQ(graph.samples_ns.size(), 10u);
  EXPECT_EQ(static_cast<std::int64_t>(flushed.samples_ns.size()), flushed.n_repeat);
  const double graph_ns = summarize(graph.samples_ns).median_ns, flushed_ns = summarize(flushed.samples_ns).median_ns,
               plain_ns = summarize(plain.samples_ns).median_ns;
  EXPECT_NEAR(graph_ns / plain_ns, 1.0, 0.25);
  EXPECT_NEAR(flushed_ns / plain_ns, 1.0, 0.25);
  EXPECT_TRUE(forward.check().passed) << "the product after its replays";
  std::printf(
      "cublaslt bf16 4096^3 medians: graph %.1f us (%lld calls a replay), graph with flush %.1f us, do_bench %.1f us\n",
      graph_ns / 1e3, static_cast<long long>(graph.n_repeat), flushed_ns / 1e3, plain_ns / 1e3);
}

TEST(GpuEnvironment, ReadsTheDevice) {
  SKIP_WITHOUT_GPU();
  const GpuInfo gpu = read_gpu_info(0);
  EXPECT_EQ(gpu.index, 0);
  EXPECT_EQ(gpu.uuid.rfind("GPU-", 0), 0u) << gpu.uuid;
  EXPECT_EQ(gpu.architecture.rfind("sm_", 0), 0u) << gpu.architecture;
  EXPECT_FALSE(gpu.pci_bus_id.empty());
  EXPECT_GT(gpu.memory_bytes, 0u);
  std::printf("GPU 0: %s %s %s %s driver %s runtime %s cublas %s nccl %s\n", gpu.name.c_str(), gpu.uuid.c_str(),
              gpu.pci_bus_id.c_str(), gpu.architecture.c_str(), gpu.driver_version.c_str(),
              gpu.cuda_runtime_version.c_str(), gpu.cublas_version.c_str(), gpu.nccl_version.c_str());
}

}  // namespace
}  // namespace ks
