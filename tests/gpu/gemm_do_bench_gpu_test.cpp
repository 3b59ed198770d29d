// On a GPU: the cuBLASLt gemm against its reference, the do_bench protocol's CUDA path, and what the
// environment reads off the device. Skipped where no GPU is present.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/kernels.h"
#include "env/environment.h"
#include "kernels/kernel.h"
#include "measure/do_bench.h"

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
