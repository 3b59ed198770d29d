// On a GPU, end to end under mpirun: a bf16 product of 4096^3 under `energy: true`, whose timed
// repetitions (rep_ms 100) are too short for the energy counter, gets a window of its own of a
// second or more, and a figure whose power (joules per call over the median time) is one a GPU can
// draw; show prints it by default. Skipped where no GPU is present, or where NVML keeps no energy
// counter for it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "env/environment.h"
#include "measure/gpu_state.h"
#include "store/results_file.h"
#include "support/cli_runner.h"
#include "support/kernels.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kGpuEnergySweep = R"(name: gpu_energy
protocol: {energy: true}
kernels:
  - kernel: gemm
    implementations: [cublaslt]
    fixed: {M: 4096, N: 4096, K: 4096, dtype: bf16}
    grid: {seed: [0]}
)";

TEST(GpuEnergy, ABf16ProductUnderEnergyTrueGetsJoulesPerCallAtAPowerAGpuDraws) {
  SKIP_WITHOUT_GPU();
  std::string why_not;
  const auto reader = GpuStateReader::open(read_gpu_info(0).uuid, why_not);
  if (!reader) GTEST_SKIP() << why_not;
  if (std::isnan(reader->total_energy_mj())) GTEST_SKIP() << "NVML keeps no energy counter for this GPU";

  const fs::path dir = fresh_directory("energy_gpu");
  write_file(dir / "gpu_energy.yaml", kGpuEnergySweep);
  const auto run =
      run_shell(mpirun_test_cli(1, fmt::format("run {} --output-dir {} --calibrate off",
                                               (dir / "gpu_energy.yaml").string(), (dir / "out").string())));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const fs::path results = dir / "out" / "gpu_energy.h5";

  const std::vector<StoredRun> runs = ResultsFile::open_read_only(results).read_runs();
  ASSERT_EQ(runs.size(), 1u);
  const StoredRun& point = runs.front();
  ASSERT_EQ(point.status, "passed") << point.message;
  ASSERT_GT(point.joules_per_call, 0);
  EXPECT_GE(point.energy_window_s, 1.0) << "never a figure from a window under a second";
  const double watts = point.joules_per_call / (point.stats.median_ns / 1e9);
  EXPECT_GT(watts, 20);
  EXPECT_LT(watts, 1500);
  EXPECT_DOUBLE_EQ(point.gflops_per_joule, point.flops / 1e9 / point.joules_per_call);
  std::printf("cublaslt bf16 4096^3: %.4f J a call over a %.2f s window, median %.1f us: %.0f W, %.0f GFLOP/J\n",
              point.joules_per_call, point.energy_window_s, point.stats.median_ns / 1e3, watts, point.gflops_per_joule);

  const auto table = run_command(fmt::format("{} show {}", KS_CLI, results.string()));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("joules_per_call"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("gflops_per_joule"), std::string::npos) << table.out;
}

}  // namespace
}  // namespace ks::testing
