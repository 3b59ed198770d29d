// On a GPU: the Python worker's torch implementations pass their checks there, Liger's kernel does
// where liger_kernel is importable (LIGER_SRC or external/liger: see bench/gpu/liger_benchmark.sh), and
// the Python worker's do_bench times a callable as triton.testing.do_bench does (where triton is
// importable). Skipped where no GPU is present, or where python3 has no CUDA torch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cluster/worker_process.h"
#include "support/cli_runner.h"
#include "support/kernels.h"
#include "support/python_worker.h"

namespace ks {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

std::string python() {
  const char* chosen = std::getenv("KERNELSWEEP_PYTHON");
  return chosen && *chosen ? chosen : "python3";
}

bool python_can(const std::string& statement) {
  return testing::run_command(fmt::format("{} -c '{}' > /dev/null 2>&1", python(), statement)).exit_code == 0;
}

// Liger-Kernel's source, where it was brought (never part of this tree).
std::string liger_source() {
  if (const char* chosen = std::getenv("LIGER_SRC"); chosen && *chosen) return chosen;
  return std::string(KS_SOURCE_DIR) + "/external/liger";
}

class PythonGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_GPU();
    if (!python_can("import torch; assert torch.cuda.is_available()")) GTEST_SKIP() << python() << " has no CUDA torch";
    std::vector<std::string> path;
    if (fs::exists(liger_source() + "/src")) path.push_back(liger_source() + "/src");
    worker_ = testing::start_python_worker(python(), path);
  }
  static MeasureRequest request(const std::string& kernel, const std::string& implementation, const std::string& mode,
                                const Json& overrides) {
    MeasureRequest r = testing::request_for(kernel, implementation, mode, overrides);
    r.protocol.warmup_ms = 2;
    r.protocol.rep_ms = 10;
    return r;
  }
  std::unique_ptr<WorkerProcess> worker_;
};

TEST_F(PythonGpu, TorchImplementationsPassTheirChecksOnTheGpu) {
  EXPECT_GE(worker_->ensure_started().at("gpu_count").get<int>(), 1);
  for (const std::string dtype : {"fp32", "bf16"}) {
    const MeasureResult gemm =
        worker_->measure(request("gemm", "torch", "forward", {{"M", 257}, {"N", 65}, {"K", 129}, {"dtype", dtype}}));
    EXPECT_EQ(gemm.record.status, "passed") << gemm.record.message;
    EXPECT_EQ(gemm.protocol.at("timer"), "cuda_events");
    std::printf("[gemm torch %s] %s\n", dtype.c_str(), gemm.record.message.c_str());
    for (const std::string mode : {"forward", "backward", "full", "no-grad-forward"}) {
      const MeasureResult distill = worker_->measure(request("distill_cosine_loss", "torch", mode,
                                                             {{"tokens", 50},
                                                              {"hidden", 96},
                                                              {"vocab", 4099},
                                                              {"dtype", dtype},
                                                              {"bias", true},
                                                              {"ignored_fraction", 0.2}}));
      EXPECT_EQ(distill.record.status, "passed") << mode << " " << dtype << ": " << distill.record.message;
      std::printf("[distill torch %s %s] %s\n", mode.c_str(), dtype.c_str(), distill.record.message.c_str());
    }
  }
}

TEST_F(PythonGpu, LigerPassesItsCheckWhereLigerKernelIsImportable) {
  if (!fs::exists(liger_source() + "/src/liger_kernel")) GTEST_SKIP() << "no Liger-Kernel source in " << liger_source();
  for (const std::string mode : {"forward", "full"}) {
    const MeasureResult r = worker_->measure(
        request("distill_cosine_loss", "liger", mode,
                {{"tokens", 64}, {"hidden", 128}, {"vocab", 4096}, {"dtype", "fp32"}, {"chunk_size", 32}}));
    EXPECT_EQ(r.record.status, "passed") << mode << ": " << r.record.message;
    EXPECT_EQ(r.implementation.at("labels").value("liger_version", ""), "0.5.10") << r.implementation.dump();
    std::printf("[distill liger %s] %s: %s\n", mode.c_str(), r.record.status.c_str(), r.record.message.c_str());
  }
}

// Not a speed test: the two protocols must measure the same thing on the same callable, within the
// spread of a compute-bound product from one timing to the next.
TEST_F(PythonGpu, DoBenchTimesACallableAsTritonsDoes) {
  if (!python_can("import triton")) GTEST_SKIP() << python() << " cannot import triton";
  const auto out = testing::run_command(fmt::format("PYTHONPATH={}/python {} {}/tests/python/compare_with_triton.py",
                                                    KS_SOURCE_DIR, python(), KS_SOURCE_DIR));
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const Json figures = Json::parse(out.out);
  std::printf("[do_bench vs triton %s] %s\n", figures["triton"].get<std::string>().c_str(), out.out.c_str());
  const double ours = figures["ours_ms"], theirs = figures["triton_ms"];
  EXPECT_LT(std::fabs(ours / theirs - 1), 0.05) << "kernelsweep " << ours << " ms, triton " << theirs << " ms";
  const double our_calls = figures["our_calls"], their_calls = figures["their_calls"];
  EXPECT_LT(std::fabs(our_calls / their_calls - 1), 0.10) << our_calls << " calls against " << their_calls;
}

}  // namespace
}  // namespace ks
