// `kernelsweep merge` of real sweeps: one sweep of the test kernels run whole and as 3 shards (all
// into one folder) under the real mpirun; the shards merged give the whole run's points, with
// every row's samples where the row says, and a status with nothing missing.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/fields.h"
#include "store/results_file.h"
#include "support/cli_runner.h"
#include "view/view.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr int kShards = 3;

// Enough shapes of test_sleep and gemm that each of 3 shards gets some.
const std::string kShardedSweep = quick_sweep("sharded", kSleepAndCpuGemmKernels);
constexpr std::size_t kPlanSize = 6 * 2 * 2 + 4;

// The shards share one output folder: each has a results file and a documents folder of its own.
std::string shard_file(int shard) { return fmt::format("shards/sharded.shard-{}-of-3.h5", shard); }

// What of a point does not depend on the run's timing: the same in any two runs of one build.
Json deterministic(const StoredRun& run) {
  const Json columns = fields_to_json(run, run_record_fields<StoredRun>());
  Json out = Json::object();
  for (const char* column : {"kernel", "implementation", "mode", "params", "status"}) out[column] = columns.at(column);
  out["protocol"] = run.cited.protocol_digest;
  out["workload"] = run.cited.workload_digest;
  out["implementation_digest"] = run.cited.implementation_digest;
  return out;
}

std::map<std::string, Json> deterministic_view(const fs::path& file) {
  std::map<std::string, Json> points;
  for (const ViewRow& row : current_view(ResultsFile::open_read_only(file), file.string()))
    points[row.run.point_id] = deterministic(row.run);
  return points;
}

// Every column of a row but samples_offset (which a merge rebases), figures not measured as null.
Json columns_but_offset(StoredRun run) {
  run.samples_offset = 0;
  Json out = fields_to_json(run, run_record_fields<StoredRun>());
  out["cited"] = {run.cited.protocol_digest, run.cited.environment_digest, run.cited.workload_digest,
                  run.cited.implementation_digest};
  out["samples_count"] = run.samples_count;
  return out;
}

CommandResult test_cli(const std::string& args) { return run_shell(fmt::format("{} {}", KS_TEST_CLI, args)); }

// The sweep run whole (whole/sharded.h5) and as shards 0/3, 1/3 and 2/3, once for every test here.
class MergeShards : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir = fresh_directory("merge_shards");
    sweep = write_sweep(dir, kShardedSweep);
    runs_ok = true;
    const auto whole =
        run_shell(mpirun_test_cli(2, fmt::format("run {} --output-dir {}", sweep.string(), (dir / "whole").string())));
    runs_output = whole.output;
    runs_ok = whole.exit_code == 0;
    for (int shard = 0; shard < kShards && runs_ok; ++shard) {
      const auto part = run_shell(mpirun_test_cli(2, fmt::format("run {} --shard {}/{} --output-dir {}", sweep.string(),
                                                                 shard, kShards, (dir / "shards").string())));
      runs_output = part.output;
      runs_ok = part.exit_code == 0;
    }
  }

  void SetUp() override { ASSERT_TRUE(runs_ok) << runs_output; }

  static std::string shards_in_order() {
    std::string files;
    for (int shard = 0; shard < kShards; ++shard) files += (dir / shard_file(shard)).string() + " ";
    return files;
  }

  static inline fs::path dir, sweep;
  static inline bool runs_ok = false;
  static inline std::string runs_output;
};

TEST_F(MergeShards, TheMergedShardsAreTheWholeRunPointForPoint) {
  const fs::path merged = dir / "merged.h5";
  const auto result = test_cli(fmt::format("merge {} -o {} --overwrite", shards_in_order(), merged.string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;

  std::size_t shard_points = 0;
  for (int shard = 0; shard < kShards; ++shard) {
    const auto points = deterministic_view(dir / shard_file(shard));
    EXPECT_GT(points.size(), 0u) << "shard " << shard << " is empty: the sweep needs more shapes";
    shard_points += points.size();
  }
  EXPECT_EQ(shard_points, kPlanSize) << "the shards partition the plan";

  const auto whole = deterministic_view(dir / "whole/sharded.h5");
  ASSERT_EQ(whole.size(), kPlanSize);
  EXPECT_EQ(deterministic_view(merged), whole);

  const RunInfo info = ResultsFile::open_read_only(merged).read_info();
  EXPECT_EQ(info.plan_size, static_cast<std::int64_t>(kPlanSize)) << "the whole plan's size, not a shard's";
  EXPECT_EQ(info.sweep_text, kShardedSweep);
  std::string earliest = "9", latest;
  for (int shard = 0; shard < kShards; ++shard) {
    const RunInfo part = ResultsFile::open_read_only(dir / shard_file(shard)).read_info();
    EXPECT_LT(part.plan_size, info.plan_size);
    earliest = std::min(earliest, part.started_at);
    latest = std::max(latest, part.ended_at);
  }
  EXPECT_EQ(info.started_at, earliest);
  EXPECT_EQ(info.ended_at, latest);
  EXPECT_EQ(ResultsFile::open_read_only(merged).read_sessions().size(), static_cast<std::size_t>(kShards));
}

TEST_F(MergeShards, EveryRowIsItsShardsRowWithItsSamples) {
  const fs::path merged = dir / "rows.h5";
  const auto result = test_cli(fmt::format("merge {} -o {}", shards_in_order(), merged.string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const ResultsFile all = ResultsFile::open_read_only(merged);
  const auto rows = all.read_runs();
  std::size_t at = 0;
  std::uint64_t samples = 0;
  std::set<std::string> environments, protocols;
  for (int shard = 0; shard < kShards; ++shard) {
    const ResultsFile part = ResultsFile::open_read_only(dir / shard_file(shard));
    for (const StoredRun& original : part.read_runs()) {
      ASSERT_LT(at, rows.size());
      const StoredRun& row = rows[at++];
      EXPECT_EQ(columns_but_offset(row), columns_but_offset(original));
      const auto values = all.read_samples(row.samples_offset, row.samples_count);
      EXPECT_EQ(values.size(), row.samples_count);
      EXPECT_EQ(values, part.read_samples(original.samples_offset, original.samples_count)) << row.point_id;
      if (row.status == "passed") { EXPECT_EQ(row.samples_count, static_cast<std::uint64_t>(row.n_repeat)); }
      samples += row.samples_count;
    }
    for (const auto& document : part.read_environments()) environments.insert(document.digest);
    for (const auto& document : part.read_protocols()) protocols.insert(document.digest);
  }
  EXPECT_EQ(at, rows.size()) << "every row of every shard, nothing else";
  EXPECT_EQ(all.sample_count(), samples);
  EXPECT_EQ(all.read_environments().size(), environments.size()) << "each environment once";
  EXPECT_EQ(all.read_protocols().size(), protocols.size()) << "each protocol once";
}

TEST_F(MergeShards, StatusJudgesAShardAgainstItsShardAndTheMergedFileAgainstThePlan) {
  const fs::path merged = dir / "status.h5";
  ASSERT_EQ(test_cli(fmt::format("merge {} -o {}", shards_in_order(), merged.string())).exit_code, 0);
  for (int index = 0; index < kShards; ++index) {
    const RunInfo info = ResultsFile::open_read_only(dir / shard_file(index)).read_info();
    EXPECT_EQ(info.shard_index, index);
    EXPECT_EQ(info.shard_count, kShards);
    EXPECT_TRUE(fs::is_directory(dir / fmt::format("shards/kernelindex/shard-{}-of-3", index)));
    const auto shard = test_cli(fmt::format("status {}", (dir / shard_file(index)).string()));
    EXPECT_NE(shard.output.find(fmt::format("{} points planned in shard {}/3", info.plan_size, index)),
              std::string::npos)
        << shard.output;
    EXPECT_NE(shard.output.find("missing: 0 points"), std::string::npos) << shard.output;
  }
  const RunInfo whole = ResultsFile::open_read_only(merged).read_info();
  EXPECT_EQ(whole.shard_count, 1);
  const auto status = test_cli(fmt::format("status {}", merged.string()));
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find(fmt::format("{} points planned\n", kPlanSize)), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("missing: 0 points"), std::string::npos) << status.output;
}

TEST_F(MergeShards, AShardsFileIsNotResumedAsAnotherShard) {
  const auto other = run_shell(mpirun_test_cli(
      1, fmt::format("run {} --shard 2/3 --resume --results-file {}", sweep.string(), (dir / shard_file(1)).string())));
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("cannot resume: the file holds shard 1/3 and this run measures shard 2/3"),
            std::string::npos)
      << other.output;
}

// A point measured in two files (a job rerun, or a shard run again): both rows are kept, the later
// file's last, and the current view takes it.
TEST_F(MergeShards, ALaterFilesRerunWins) {
  const fs::path merged = dir / "rerun.h5";
  const fs::path whole = dir / "whole/sharded.h5", again = dir / shard_file(0);
  const auto result = test_cli(fmt::format("merge {} {} -o {}", whole.string(), again.string(), merged.string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;

  std::map<std::string, StoredRun> rerun;
  for (const StoredRun& r : ResultsFile::open_read_only(again).read_runs()) rerun[r.point_id] = r;
  const ResultsFile file = ResultsFile::open_read_only(merged);
  EXPECT_EQ(file.run_count(), kPlanSize + rerun.size());
  for (const ViewRow& row : current_view(file, merged.string())) {
    const auto found = rerun.find(row.run.point_id);
    if (found == rerun.end()) {
      EXPECT_EQ(row.rows_of_point, 1u) << row.run.point_id;
      continue;
    }
    EXPECT_EQ(row.rows_of_point, 2u) << row.run.point_id;
    EXPECT_EQ(row.run.started_at, found->second.started_at) << "the later file's row is the current one";
    EXPECT_EQ(columns_but_offset(row.run), columns_but_offset(found->second));
  }
}

TEST_F(MergeShards, ASweepFileThatChangedIsAnotherSweep) {
  const fs::path changed = dir / "changed";
  fs::create_directories(changed);
  write_file(changed / "sweep.yaml",
             std::string(kShardedSweep).replace(std::string(kShardedSweep).find("to: 6"), 5, "to: 7"));
  const auto run =
      run_shell(mpirun_test_cli(1, fmt::format("run {} --shard 1/{} --output-dir {}", (changed / "sweep.yaml").string(),
                                               kShards, changed.string())));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto refused =
      test_cli(fmt::format("merge {} {} -o {}", (dir / shard_file(0)).string(),
                           (changed / "sharded.shard-1-of-3.h5").string(), (dir / "refused.h5").string()));
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("results of different sweeps"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("`      id: {from: 1, to: 7, step: 1}`"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(dir / "refused.h5"));
}

}  // namespace
}  // namespace ks::testing
