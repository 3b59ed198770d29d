// Energy on the CPU, end to end under mpirun: a sweep that asks for energy (protocol `energy: true`),
// its timed repetitions aiming at over a second (rep_ms 1100), records no energy figure on a CPU rank
// (it has no energy counter), and neither show nor the documents show one.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "store/results_file.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr const char* kCpuEnergySweep = R"(name: cpu_energy
protocol: {warmup_ms: 5, rep_ms: 1100, max_repeat: 1000000, energy: true}
kernels:
  - kernel: gemm
    implementations: [cpu]
    grid: {K: [32, 64]}
    fixed: {M: 32, N: 32, dtype: fp32}
)";

std::string document_text(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(EnergyRun, ACpuRunThatAsksForEnergyRecordsAndShowsNone) {
  const fs::path dir = fresh_directory("energy_cpu");
  write_file(dir / "cpu_energy.yaml", kCpuEnergySweep);
  const auto run = run_shell(mpirun_test_cli(
      1, fmt::format("run {} --output-dir {}", (dir / "cpu_energy.yaml").string(), (dir / "out").string())));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const fs::path results = dir / "out" / "cpu_energy.h5";

  const std::vector<StoredRun> runs = ResultsFile::open_read_only(results).read_runs();
  ASSERT_EQ(runs.size(), 2u);
  for (const StoredRun& stored : runs) {
    SCOPED_TRACE(stored.params_json);
    EXPECT_EQ(stored.status, "passed") << stored.message;
    EXPECT_GT(stored.flops, 0) << "its FLOPs are counted: only the energy is missing";
    EXPECT_TRUE(std::isnan(stored.joules_per_call));
    EXPECT_TRUE(std::isnan(stored.gflops_per_joule));
    EXPECT_TRUE(std::isnan(stored.energy_window_s));
  }

  const auto table = run_command(fmt::format("{} show {}", KS_CLI, results.string()));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("tflops"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("joules_per_call"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("gflops_per_joule"), std::string::npos) << table.out;

  // Asked for by name, the columns are there and empty.
  const auto asked =
      run_command(fmt::format("{} show {} --format json --columns K,joules_per_call,gflops_per_joule,energy_window_s",
                              KS_CLI, results.string()));
  ASSERT_EQ(asked.exit_code, 0) << asked.err;
  const Json rows = Json::parse(asked.out);
  ASSERT_EQ(rows.size(), 2u);
  for (const Json& row : rows)
    for (const char* column : {"joules_per_call", "gflops_per_joule", "energy_window_s"})
      EXPECT_TRUE(row.at(column).is_null()) << column << " of " << row.dump();

  // The documents measure no energy either.
  std::size_t documents = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir / "out" / "kernelindex")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    const std::string text = document_text(entry.path());
    if (text.find("\"measurements\"") == std::string::npos) continue;
    ++documents;
    EXPECT_EQ(text.find("\"energy"), std::string::npos) << entry.path();
  }
  EXPECT_EQ(documents, 2u);
}

}  // namespace
}  // namespace ks::testing
