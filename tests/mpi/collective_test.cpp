// Collectives on gangs of ranks under the real mpirun: gangs formed among single-rank points on four
// CPU ranks, each collective point measured once by its whole gang and recorded by its first member,
// checked element by element, its bandwidths stored; gangs larger than the run recorded `skipped`.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "store/results_file.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSweep = R"(name: gangs
protocol:
  warmup_ms: 1
  rep_ms: 4
  max_repeat: 40
kernels:
  - kernel: noop
    implementations: [cpu]
    grid:
      id: {from: 1, to: 30, step: 1}
  - kernel: all_reduce
    implementations: [mpi]
    grid:
      bytes: {from: 1K, to: 16K, mul: 4}
      group_size: [1, 2, 4]
      op: [sum, prod, max, avg]
      dtype: [fp32, bf16, int8]
  - kernel: test_sleep
    implementations: [cpu]
    grid:
      id: {from: 1, to: 8, step: 1}
      run_ms: [1]
  - kernel: all_gather
    implementations: [mpi]
    grid: {bytes: [4K], group_size: [3], in_place: [false, true], dtype: [fp16, fp64]}
  - kernel: reduce_scatter
    implementations: [mpi]
    grid: {bytes: [4K], group_size: [4], in_place: [false, true], op: [min, sum]}
  - kernel: alltoall
    implementations: [mpi]
    grid: {bytes: [8K], group_size: [2, 4], in_place: [false, true]}
  - kernel: broadcast
    implementations: [mpi]
    grid: {bytes: [4K], group_size: [4], root: [0, 3], in_place: [false, true]}
  - kernel: all_reduce
    implementations: [mpi]
    grid: {bytes: [1K], group_size: [5], placement: [spread, same-node]}
)";

double bus_factor(const std::string& kernel, int members) {
  if (kernel == "all_reduce") return 2.0 * (members - 1) / members;
  if (kernel == "broadcast") return 1;
  return static_cast<double>(members - 1) / members;
}

class GangsOnFourRanks : public ::testing::TestWithParam<std::string> {};

TEST_P(GangsOnFourRanks, EveryPointOnceEachCollectiveCheckedWithItsBandwidths) {
  const std::string schedule = GetParam();
  const fs::path dir = fresh_directory("gangs_" + schedule);
  const fs::path sweep = dir / "sweep.yaml";
  write_file(sweep, kSweep);
  const auto ids = planned_ids(sweep);
  ASSERT_EQ(ids.size(), 30u + 3 * 3 * 4 * 3 + 8 * 2 + 4 + 4 + 4 + 4 + 2);  // test_sleep: two modes

  const auto run = run_shell("timeout 300 " + mpirun_test_cli(4, fmt::format("run {} --output-dir {} --schedule {}",
                                                                               sweep.string(), dir.string(), schedule)));
  ASSERT_EQ(run.exit_code, 0) << run.output;

  const ResultsFile file = ResultsFile::open_read_only(dir / "gangs.h5");
  const auto rows = file.read_runs();
  std::map<std::string, int> seen;
  std::set<int> single_ranks;
  int collectives = 0;
  for (const StoredRun& r : rows) {
    ++seen[r.point_id];
    const Json params = Json::parse(r.params_json);
    if (r.kernel == "noop" || r.kernel == "test_sleep") {
      EXPECT_EQ(r.status, "passed") << r.message;
      EXPECT_TRUE(std::isnan(r.bus_gbps));
      EXPECT_EQ(r.wrong_elements, -1);
      single_ranks.insert(r.rank);
      continue;
    }
    const int members = params.at("group_size").get<int>();
    if (members > 4) {
      EXPECT_EQ(r.status, "skipped");
      EXPECT_NE(r.message.find("group_size 5 needs 5 ranks; this run has 4"), std::string::npos) << r.message;
      continue;
    }
    ++collectives;
    EXPECT_EQ(r.status, "passed") << r.kernel << " " << r.params_json << ": " << r.message;
    EXPECT_EQ(r.wrong_elements, 0) << r.params_json;
    EXPECT_NE(r.message.find("every member received the"), std::string::npos) << r.message;
    EXPECT_GT(r.n_repeat, 0);
    ASSERT_GT(r.stats.median_ns, 0);
    EXPECT_NEAR(r.gbps, r.bytes / r.stats.median_ns, 1e-9 * r.gbps);
    EXPECT_NEAR(r.bus_gbps, r.gbps * bus_factor(r.kernel, members), 1e-9 * r.gbps) << r.kernel;
    EXPECT_EQ(file.read_samples(r.samples_offset, r.samples_count).size(), static_cast<std::size_t>(r.n_repeat));
  }
  EXPECT_EQ(collectives, 3 * 3 * 4 * 3 + 4 + 4 + 4 + 4);
  EXPECT_EQ(rows.size(), ids.size());
  for (const auto& id : ids) EXPECT_EQ(seen[id], 1) << id;
  EXPECT_GT(single_ranks.size(), 1u) << "single-rank points should spread over the ranks";
}

INSTANTIATE_TEST_SUITE_P(Schedules, GangsOnFourRanks, ::testing::Values("dynamic", "static"));

TEST(Gangs, ABadRootIsRefusedAtValidation) {
  const fs::path dir = fresh_directory("gangs_bad_root");
  const fs::path sweep = dir / "sweep.yaml";
  write_file(sweep, R"(name: bad
kernels:
  - kernel: broadcast
    implementations: [mpi]
    grid: {group_size: [2], root: [2]}
)");
  const auto result = run_shell(mpirun_test_cli(1, "validate " + sweep.string()));
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("root: 2 is not a member of a gang of 2"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("sweep.yaml:"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace ks::testing
