// `kernelsweep history` on real sweeps under mpirun: one sweep of two sleepers run night after night
// with --label, its sleepers made 60% slower (KS_TEST_SLEEP_SCALE: what a slower build of the
// kernel measures) from the fourth night on. Sleeps are stable from run to run on a loaded machine
// where busy CPU work is not (bench/results/compare-cpu2.md), so the steps asserted are the sleepers'.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernelindex/document_reader.h"
#include "store/results_file.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr int kNights = 5, kSlowerFrom = 3;

constexpr const char* kNightlySweep = R"(name: nightly
protocol: {warmup_ms: 2, rep_ms: 60, max_repeat: 100, flush_bytes: 0}
kernels:
  - kernel: test_sleep
    implementations: [cpu]
    modes: [forward]
    grid: {id: [1, 2]}
    fixed: {run_ms: 3.0}
)";

class HistoryRuns : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    directory_ = new fs::path(fresh_directory("history_runs"));
    const fs::path sweep = write_sweep(*directory_, kNightlySweep);
    for (int night = 0; night < kNights; ++night) {
      const auto run = run_shell(fmt::format(
          "KS_TEST_SLEEP_SCALE={} {}", night >= kSlowerFrom ? "1.6" : "1.0",
          mpirun_test_cli(
              2, fmt::format("run {} --output-dir {} --label commit=c{} --label night={}", sweep.string(),
                             (*directory_ / "nights" / fmt::format("night-{}", night)).string(), night, night))));
      ASSERT_EQ(run.exit_code, 0) << run.output;
    }
  }
  static void TearDownTestSuite() { delete directory_; }
  static fs::path night(int n) { return *directory_ / "nights" / fmt::format("night-{}", n) / "nightly.h5"; }
  static fs::path* directory_;
};
fs::path* HistoryRuns::directory_ = nullptr;

TEST_F(HistoryRuns, RunLabelsAreInTheResultsFileAndEveryDocument) {
  EXPECT_EQ(ResultsFile::open_read_only(night(2)).read_info().labels, (RunLabels{{"commit", "c2"}, {"night", "2"}}));
  std::size_t documents = 0;
  for_each_document(night(2).parent_path() / "kernelindex", {}, [&](std::string_view line) {
    const Json labels = Json::parse(line).at("run").at("metadata").at("labels");
    EXPECT_EQ(labels.at("commit"), "c2");
    EXPECT_EQ(labels.at("night"), "2");
    EXPECT_TRUE(labels.contains("kernelsweep_version"));
    ++documents;
  });
  EXPECT_EQ(documents, 2u);
}

TEST_F(HistoryRuns, SleepersMadeSlowerAreAStepAtTheirNightAndFailTheGate) {
  const CommandOutput run = run_command(fmt::format("{} history {} --order label:night --format json --fail-on-step",
                                                    KS_CLI, (*directory_ / "nights").string()));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("2 points are slower since a step of more than 5% (--fail-on-step)"), std::string::npos)
      << run.err;
  const Json out = Json::parse(run.out);
  ASSERT_EQ(out.at("series").size(), 2u);
  for (const Json& series : out.at("series")) {
    EXPECT_EQ(series.at("runs_seen"), kNights);
    ASSERT_EQ(series.at("steps").size(), 1u) << series.dump();
    const Json& step = series.at("steps")[0];
    EXPECT_EQ(step.at("run"), kSlowerFrom);
    EXPECT_EQ(step.at("labels"), (Json{{"commit", "c3"}, {"night", "3"}}));
    // 60% more sleep, less the fixed cost of a call a loaded machine adds to both.
    EXPECT_GT(step.at("change_pct").get<double>(), 30) << step.dump();
    EXPECT_EQ(series.at("state"), "slower");
  }
}

TEST_F(HistoryRuns, NightsOfOneBuildHaveNoStep) {
  std::string nights;
  for (int n = 0; n < kSlowerFrom; ++n) nights += " " + night(n).string();
  // A night measured while the machine was busy may sit some percent above the others, a change as
  // real as any to `history` (pending on the latest night); the build's own nights differ by less
  // than 25%.
  const CommandOutput run =
      run_command(fmt::format("{} history{} --format json --fail-on-step --min-change 25", KS_CLI, nights));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const Json out = Json::parse(run.out);  // held: the loop iterates a part of it
  for (const Json& series : out.at("series")) {
    EXPECT_TRUE(series.at("steps").empty()) << series.dump();
    EXPECT_TRUE(series.at("pending").is_null()) << series.dump();
  }
}

}  // namespace
}  // namespace ks::testing
