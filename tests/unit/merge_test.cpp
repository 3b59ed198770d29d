// `kernelsweep merge` on results files written through the store: what the merged file holds (every
// row, samples rebased, documents once, sessions, root attributes) and what merge refuses. Real
// sweeps, sharded and merged, are tests/mpi/merge_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/fields.h"
#include "store/results_file.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;

// A sweep text no kernel registry plans (no kernels): merge then takes plan_size from the inputs.
constexpr const char* kSweepText = "name: sweep\nkernels: []\n";

RunInfo info_of(const std::string& started_at, const std::string& command_line = "kernelsweep run sweep.yaml") {
  RunInfo info;
  info.sweep_name = "sweep";
  info.sweep_path = "sweep.yaml";
  info.sweep_text = kSweepText;
  info.plan_size = 3;
  info.kernelsweep_version = "test";
  info.git_commit = "abc";
  info.started_at = started_at;
  info.world_size = 2;
  info.host = "node-" + started_at.substr(11, 2);
  info.command_line = command_line;
  return info;
}

StoredRun row(const std::string& point, const std::string& status, std::vector<double> samples,
              const std::string& environment = "sha256:environment-a") {
  RunRecord r;
  r.point_id = point;
  r.kernel = "gemm";
  r.implementation = "cpu";
  r.mode = "forward";
  r.params_json = fmt::format(R"({{"point":"{}"}})", point);
  r.status = status;
  r.message = status == "passed" ? "" : "not timed here";
  r.host = "node";
  r.started_at = r.ended_at = "2026-12-01T00:00:00.000Z";
  if (!samples.empty()) {
    r.n_repeat = static_cast<std::int64_t>(samples.size());
    r.stats.median_ns = samples.front();
    r.flops = 2e6;
  }
  r.samples_ns = std::move(samples);
  return StoredRun(std::move(r), Citations{"sha256:protocol", environment, "sha256:workload-" + point, "sha256:impl"});
}

struct FileSpec {
  RunInfo info;
  std::vector<StoredRun> rows;
  std::vector<SessionInfo> resumed_sessions;
  std::string environment = "sha256:environment-a";
  bool finished = true;
};

fs::path write_results(const fs::path& path, FileSpec spec) {
  ResultsFile file = ResultsFile::create(path, spec.info);
  file.put_protocol("sha256:protocol", R"({"protocol":1})");
  file.put_environment(spec.environment, R"({"environment":")" + spec.environment + "\"}");
  file.put_rank(RankInfo{0, "node", -1, "", "", ""});
  for (const auto& session : spec.resumed_sessions) file.add_session(session);
  file.append(spec.rows);
  if (spec.finished) file.finish("2026-12-01T0" + spec.info.started_at.substr(12, 1) + ":30:00.000Z");
  return path;
}

CommandResult merge(const std::string& args) { return run_shell(fmt::format("{} merge {}", KS_CLI, args)); }

std::size_t line_count(const std::string& text) {
  std::size_t lines = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

// Every /runs column of a row, samples_offset left out (the merge rebases it), NaN as null.
nlohmann::json columns_but_offset(StoredRun run) {
  run.samples_offset = 0;
  auto fields = run_record_fields<StoredRun>();
  nlohmann::json out = fields_to_json(run, fields);
  out["cited"] = {run.cited.protocol_digest, run.cited.environment_digest, run.cited.workload_digest,
                  run.cited.implementation_digest};
  out["samples_count"] = run.samples_count;
  return out;
}

TEST(MergeFiles, KeepsEveryRowInOrderWithItsSamplesDocumentsOnceAndEverySession) {
  const fs::path dir = fresh_directory("merge_files");
  FileSpec a;
  a.info = info_of("2026-12-01T02:00:00.000Z");
  a.rows = {row("p1", "passed", {1.5, 2.5, 3.5}), row("p2", "skipped", {}), row("p3", "failed", {7.0})};
  a.resumed_sessions = {
      SessionInfo{"2026-12-01T02:10:00.000Z", 4, "node-r", "kernelsweep run --resume", "test", "abc"}};
  FileSpec b;
  b.info = info_of("2026-12-01T01:00:00.000Z");  // started first, ended first
  b.environment = "sha256:environment-b";
  b.rows = {row("p4", "passed", {10.0, 11.0}, b.environment), row("p2", "passed", {20.0}, b.environment)};
  write_results(dir / "a.h5", a);
  write_results(dir / "b.h5", b);

  const auto merged = merge(fmt::format("{0}/a.h5 {0}/b.h5 -o {0}/all.h5", dir.string()));
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  const ResultsFile all = ResultsFile::open_read_only(dir / "all.h5");
  const ResultsFile first = ResultsFile::open_read_only(dir / "a.h5");
  const ResultsFile second = ResultsFile::open_read_only(dir / "b.h5");

  // Every row of a, then every row of b (p2's rerun last, so the current view takes it).
  std::vector<std::pair<const ResultsFile*, StoredRun>> expected;
  for (auto& r : first.read_runs()) expected.emplace_back(&first, r);
  for (auto& r : second.read_runs()) expected.emplace_back(&second, r);
  const auto rows = all.read_runs();
  ASSERT_EQ(rows.size(), expected.size());
  std::uint64_t next_offset = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& [source, original] = expected[i];
    EXPECT_EQ(columns_but_offset(rows[i]), columns_but_offset(original)) << "row " << i;
    EXPECT_EQ(rows[i].samples_offset, next_offset) << "row " << i;
    next_offset += rows[i].samples_count;
    EXPECT_EQ(all.read_samples(rows[i].samples_offset, rows[i].samples_count),
              source->read_samples(original.samples_offset, original.samples_count))
        << "row " << i;
  }
  EXPECT_EQ(all.sample_count(), 3u + 1 + 2 + 1);
  EXPECT_TRUE(std::isnan(rows[1].stats.median_ns)) << "a figure not measured stays NaN";
  const auto statuses = all.point_statuses();
  const auto p2 =
      std::find_if(statuses.begin(), statuses.end(), [](const PointStatus& p) { return p.key == point_key("p2"); });
  ASSERT_NE(p2, statuses.end());
  EXPECT_EQ(p2->status, "passed");

  const auto protocols = all.read_protocols();
  ASSERT_EQ(protocols.size(), 1u) << "one protocol, stored once";
  const auto environments = all.read_environments();
  ASSERT_EQ(environments.size(), 2u);
  EXPECT_EQ(environments[0].digest, "sha256:environment-a");
  EXPECT_EQ(environments[1].digest, "sha256:environment-b");
  EXPECT_EQ(all.read_ranks().size(), 1u) << "an identical rank row is stored once";

  const auto sessions = all.read_sessions();
  ASSERT_EQ(sessions.size(), 3u) << "a's two sessions, then b's";
  EXPECT_EQ(sessions[0].started_at, "2026-12-01T02:00:00.000Z");
  EXPECT_EQ(sessions[1].command_line, "kernelsweep run --resume");
  EXPECT_EQ(sessions[2].started_at, "2026-12-01T01:00:00.000Z");

  const RunInfo info = all.read_info();
  EXPECT_EQ(info.sweep_text, kSweepText);
  EXPECT_EQ(info.host, "node-02") << "the root attributes are the first input's";
  EXPECT_EQ(info.started_at, "2026-12-01T01:00:00.000Z") << "the earliest start";
  EXPECT_EQ(info.ended_at, "2026-12-01T02:30:00.000Z") << "the latest end";
  EXPECT_EQ(info.plan_size, 3);
}

TEST(MergeFiles, AnUnfinishedInputLeavesEndedAtEmptyAndSaysSo) {
  const fs::path dir = fresh_directory("merge_unfinished");
  FileSpec a;
  a.info = info_of("2026-12-01T02:00:00.000Z");
  a.rows = {row("p1", "passed", {1.0})};
  FileSpec b = a;
  b.finished = false;
  write_results(dir / "a.h5", a);
  write_results(dir / "b.h5", b);
  const auto merged = merge(fmt::format("{0}/a.h5 {0}/b.h5 -o {0}/all.h5", dir.string()));
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_NE(merged.output.find("b.h5 is not finished"), std::string::npos) << merged.output;
  EXPECT_EQ(ResultsFile::open_read_only(dir / "all.h5").read_info().ended_at, "");
}

TEST(MergeFiles, PlanSizeOfACompleteSetOfShardsIsTheirSum) {
  const fs::path dir = fresh_directory("merge_shard_plan_size");
  FileSpec zero;
  zero.info = info_of("2026-12-01T02:00:00.000Z", "kernelsweep run sweep.yaml --shard 0/2");
  zero.info.shard_count = 2;
  zero.rows = {row("p1", "passed", {1.0})};
  FileSpec one;
  one.info = info_of("2026-12-01T03:00:00.000Z", "kernelsweep run sweep.yaml --shard=1/2 --results-file one.h5");
  one.info.plan_size = 4;
  one.info.shard_index = 1;
  one.info.shard_count = 2;
  one.rows = {row("p2", "passed", {2.0})};
  write_results(dir / "zero.h5", zero);
  write_results(dir / "one.h5", one);

  auto merged = merge(fmt::format("{0}/zero.h5 {0}/one.h5 -o {0}/all.h5", dir.string()));
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_EQ(ResultsFile::open_read_only(dir / "all.h5").read_info().plan_size, 3 + 4);

  // One shard of two: the whole plan's size is not known here, and merge says which it kept.
  merged = merge(fmt::format("{0}/one.h5 -o {0}/part.h5", dir.string()));
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_NE(merged.output.find("plan_size is"), std::string::npos) << merged.output;
  EXPECT_EQ(ResultsFile::open_read_only(dir / "part.h5").read_info().plan_size, 4);
}

TEST(MergeFiles, OverwriteReplacesTheOutput) {
  const fs::path dir = fresh_directory("merge_overwrite");
  FileSpec a;
  a.info = info_of("2026-12-01T02:00:00.000Z");
  a.rows = {row("p1", "passed", {1.0}), row("p2", "passed", {2.0})};
  write_results(dir / "a.h5", a);
  write_file(dir / "all.h5", "an older merge\n");
  const auto merged = merge(fmt::format("{0}/a.h5 -o {0}/all.h5 --overwrite", dir.string()));
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_EQ(ResultsFile::open_read_only(dir / "all.h5").run_count(), 2u);
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename().string().find(".merging"), std::string::npos) << "left behind: " << entry.path();
}

class MergeRefusals : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fresh_directory("merge_refusals");
    FileSpec a;
    a.info = info_of("2026-12-01T02:00:00.000Z");
    a.rows = {row("p1", "passed", {1.0})};
    write_results(dir / "a.h5", a);
    FileSpec renamed = a;
    renamed.info.sweep_name = "other";
    write_results(dir / "renamed.h5", renamed);
    FileSpec changed = a;
    changed.info.sweep_text = "name: sweep\nkernels: [gemm]\n";
    write_results(dir / "changed.h5", changed);
    write_file(dir / "notes.txt", "not HDF5\n");
  }

  // Refused: exit 2, one line naming the file and the problem, and no output written.
  void expect_refused(const std::string& args, const std::vector<std::string>& said) {
    const auto result = merge(args);
    EXPECT_EQ(result.exit_code, 2) << args << "\n" << result.output;
    EXPECT_EQ(line_count(result.output), 1u) << result.output;
    for (const auto& words : said)
      EXPECT_NE(result.output.find(words), std::string::npos) << words << " in\n" << result.output;
    EXPECT_FALSE(fs::exists(dir / "all.h5")) << args;
  }

  std::string path(const std::string& name) const { return (dir / name).string(); }
  fs::path dir;
};

TEST_F(MergeRefusals, FilesOfAnotherSweep) {
  expect_refused(fmt::format("{} {} -o {}", path("a.h5"), path("renamed.h5"), path("all.h5")),
                 {"a.h5 and", "renamed.h5 are results of different sweeps", "sweep sweep and sweep other"});
  expect_refused(fmt::format("{} {} -o {}", path("a.h5"), path("changed.h5"), path("all.h5")),
                 {"changed.h5 are results of different sweeps", "line 2:", "a.h5 has `kernels: []`",
                  "changed.h5 has `kernels: [gemm]`"});
}

TEST_F(MergeRefusals, AFileThatIsNotAResultsFileOrIsMissing) {
  expect_refused(fmt::format("{} {} -o {}", path("a.h5"), path("notes.txt"), path("all.h5")),
                 {"notes.txt: not a kernelsweep results file"});
  expect_refused(fmt::format("{} {} -o {}", path("a.h5"), path("missing.h5"), path("all.h5")),
                 {"missing.h5: no such file"});
}

TEST_F(MergeRefusals, AnOutputThatExistsOrIsAnInputAndAnInputGivenTwice) {
  write_file(dir / "kept.h5", "an older merge\n");
  const auto kept = merge(fmt::format("{} -o {}", path("a.h5"), path("kept.h5")));
  EXPECT_EQ(kept.exit_code, 2) << kept.output;
  EXPECT_NE(kept.output.find("kept.h5: exists; pass --overwrite"), std::string::npos) << kept.output;
  EXPECT_EQ(fs::file_size(dir / "kept.h5"), std::string("an older merge\n").size()) << "the existing file is kept";

  const auto self = merge(fmt::format("{0} -o {0} --overwrite", path("a.h5")));
  EXPECT_EQ(self.exit_code, 2) << self.output;
  EXPECT_NE(self.output.find("the output is one of the inputs"), std::string::npos) << self.output;
  EXPECT_EQ(ResultsFile::open_read_only(dir / "a.h5").run_count(), 1u);

  expect_refused(fmt::format("{0} {0} -o {1}", path("a.h5"), path("all.h5")), {"a.h5: given twice"});
}

TEST(MergeSweepText, FirstDifferingLineNamesBothTexts) {
  EXPECT_EQ(describe_first_differing_line("a\nb\n", "a\nb\n", "x", "y"), "");
  EXPECT_EQ(describe_first_differing_line("a\nb\n", "a\nc\n", "x.h5", "y.h5"), "line 2: x.h5 has `b`, y.h5 has `c`");
  EXPECT_EQ(describe_first_differing_line("a\n", "a\nc", "x.h5", "y.h5"),
            "line 2: x.h5 has an empty line, y.h5 has `c`");
}

}  // namespace
}  // namespace ks::testing
