// Collectives on gangs of ranks under the real mpirun: gangs formed among single-rank points on four
// CPU ranks, each collective point measured once by its whole gang and recorded by its first member,
// checked element by element, its bandwidths stored; gangs larger than the run recorded `skipped`; a
// member stopped in the middle of its gang's points: the point recorded `timeout`, the sweep going on.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "store/results_file.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSweep = R"(name: gangs
protocol: {warmup_ms: 1, rep_ms: 4, max_repeat: 40}
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
  const fs::path sweep = write_sweep(dir, kSweep);
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
  const fs::path sweep = write_sweep(dir, R"(name: bad
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

// A timeout that reached one member only (tests/mpi/gang_communicators_ranks.cpp): the member that
// lost the gang's communicator does not use it again, and both make the next generation together.
TEST(Gangs, AfterOneMemberLostTheCommunicatorBothMakeTheNextGenerationTogether) {
  const auto result = run_shell(
      fmt::format("{} -np 2 --oversubscribe {}/tests/gang_communicators_ranks 2>&1", KS_MPIEXEC, KS_BINARY_DIR));
  EXPECT_EQ(result.exit_code, 0) << result.output;
}

// The pid of rank `rank` of the running `kernelsweep-test run SWEEP` (other tests' runs name other
// sweep files; its workers and mpirun have other command lines or no rank in their environment); 0
// when there is none.
int pid_of_rank(int rank, const fs::path& sweep) {
  const auto found = run_shell(fmt::format(
      "for p in $(pgrep -f 'kernelsweep-test run {}'); do tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | "
      "grep -qx OMPI_COMM_WORLD_RANK={} && ! tr '\\0' ' ' < /proc/$p/cmdline | grep -q mpirun && echo $p; done",
      sweep.string(), rank));
  return std::atoi(found.output.c_str());
}

TEST(Gangs, AMemberStoppedInTheMiddleOfCollectivesIsRecordedAsATimeoutWithoutAHang) {
  const fs::path dir = fresh_directory("gangs_stopped_member");
  // Twelve points of a few tenths of a second each (rep_ms rules their length, whatever the machine),
  // every one on both ranks: rank 1 spends nearly all its time inside a gang's calls.
  const fs::path sweep = write_sweep(dir, R"(name: stopped
protocol: {warmup_ms: 1, rep_ms: 1000}
kernels:
  - kernel: all_reduce
    implementations: [mpi]
    timeout_s: 3
    grid: {bytes: [1M], group_size: [2], op: [sum, max, min, prod], dtype: [fp32, int32, fp64]}
)");
  const auto ids = planned_ids(sweep);
  ASSERT_EQ(ids.size(), 12u);
  const fs::path rc = dir / "rc";
  run_shell(fmt::format("(timeout 300 {} > {} 2>&1; echo $? > {}) > /dev/null 2>&1 &",
                        mpirun_test_cli(2, fmt::format("run {} --output-dir {}", sweep.string(), dir.string())),
                        (dir / "log").string(), rc.string()));
  // Rank 1 stopped (SIGSTOP) past the points' timeout, twice: half a second after rank 0 made the
  // results file (the points are being measured then), and again a second and a half after it went
  // on, so that at least one stop falls inside a gang's point. The stops follow the clock, not the
  // rows stored: rank 0 stores its rows every 2 seconds, and on a fast machine the run can be over
  // before its first rows are.
  const fs::path results = dir / "stopped.h5";
  int stops = 0;
  int rank1 = 0;
  for (int i = 0; i < 600 && (rank1 == 0 || !fs::exists(results)); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (rank1 == 0) rank1 = pid_of_rank(1, sweep);
  }
  ASSERT_GT(rank1, 0) << "rank 1 of the run not found";
  ASSERT_TRUE(fs::exists(results)) << "the run made no results file\n" << read_text(dir / "log");
  for (const int delay_ms : {500, 1500}) {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    if (fs::exists(rc)) break;
    if (run_shell(fmt::format("kill -STOP {0} && sleep 5 && kill -CONT {0}", rank1)).exit_code == 0) ++stops;
  }
  for (int i = 0; i < 1200 && !fs::exists(rc); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(fs::exists(rc)) << "the run did not end\n" << read_text(dir / "log");
  // 1: the run ended in order, with points not passed (the timeouts); a crash or an abort says otherwise.
  EXPECT_EQ(std::atoi(read_text(rc).c_str()), 1) << read_text(dir / "log");
  EXPECT_EQ(read_text(dir / "log").find("Signal:"), std::string::npos) << read_text(dir / "log");
  EXPECT_GE(stops, 1);

  const ResultsFile file = ResultsFile::open_read_only(results);
  const auto rows = file.read_runs();
  std::map<std::string, int> seen;
  int timeouts = 0;
  for (const StoredRun& r : rows) {
    ++seen[r.point_id];
    if (r.status == "timeout") {
      ++timeouts;
      EXPECT_NE(r.message.find("within the point's timeout of 3 s"), std::string::npos) << r.message;
      continue;
    }
    EXPECT_EQ(r.status, "passed") << r.params_json << ": " << r.message;
  }
  EXPECT_GE(timeouts, 1) << "no stop fell inside a point";
  EXPECT_EQ(rows.size(), ids.size());
  for (const auto& id : ids) EXPECT_EQ(seen[id], 1) << id;
}

}  // namespace
}  // namespace ks::testing
