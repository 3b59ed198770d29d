// Results files that a run did not just write: damaged ones, which every reader refuses without a
// crash, a hang or a change to the file, and files of an older layout, which are read and resumed.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/parallel.h"
#include "store/results_file.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(KS_SOURCE_DIR) / "tests" / "data";

// A gzipped file of tests/data, unpacked into `folder`; the unpacked file's path.
fs::path unpacked(const fs::path& gzipped, const fs::path& folder) {
  const fs::path file = folder / gzipped.stem();  // NAME.h5.gz -> NAME.h5
  const auto r = run_shell(fmt::format("gzip -dc '{}' > '{}'", gzipped.string(), file.string()));
  if (r.exit_code != 0) throw std::runtime_error("cannot unpack " + gzipped.string() + ": " + r.output);
  return file;
}

// tests/data/damaged: one damaged copy per reason for refusing (make_corpus.py says how they were
// made). status, show and run --resume each refuse every one: a non-zero exit that is no signal, a
// message naming the file, and the file left byte for byte as it was. The files are checked side by
// side, one per usable core: their commands spend most of their time starting a process.
TEST(DamagedFiles, EveryReaderRefusesEveryFileOfTheCorpus) {
  const fs::path dir = fresh_directory("damaged_corpus");
  std::vector<fs::path> corpus;
  for (const auto& entry : fs::directory_iterator(kData / "damaged"))
    if (entry.path().string().ends_with(".h5.gz")) corpus.push_back(entry.path());
  ASSERT_GE(corpus.size(), 20u) << "the corpus is missing: tests/data/damaged/make_corpus.py makes it";
  const fs::path sweep = kData / "damaged" / "sweep.yaml";
  in_parallel(corpus.size(), [&](std::size_t i) {
    const fs::path& gzipped = corpus[i];
    SCOPED_TRACE(gzipped.filename().string());
    const fs::path file = unpacked(gzipped, dir);
    const std::string before = read_text(file);
    const std::map<std::string, std::string> commands = {
        {"status", fmt::format("{} status {}", KS_CLI, file.string())},
        // Read by three children, each a slice of the rows: the damage is found whichever has it.
        {"status, three readers", fmt::format("KERNELSWEEP_CHECK_READERS=3 {} status {}", KS_CLI, file.string())},
        {"show", fmt::format("{} show {}", KS_CLI, file.string())},
        // Without mpirun (one rank of its own): the refusal comes before any measuring, and mpirun's
        // start would take most of the test's time.
        {"resume", fmt::format("{} run {} --output-dir {} --results-file {} --resume", KS_CLI, sweep.string(),
                               dir.string(), file.string())},
    };
    for (const auto& [name, command] : commands) {
      const auto r = run_shell(command);
      EXPECT_TRUE(r.exit_code == 1 || r.exit_code == 2) << name << " exit code " << r.exit_code << ":\n" << r.output;
      EXPECT_NE(r.output.find(file.string()), std::string::npos) << name << ": the message names the file\n"
                                                                 << r.output;
      EXPECT_EQ(read_text(file), before) << name << " changed a damaged file";
    }
    fs::remove(file);
  });
}

// tests/data/layout1: the results file of 2 of the 6 points of its sweep (--shard 0/2), made by
// kernelsweep 0.1.0 in results layout 1, before strings_check and the shard attributes (so it counts
// as a file of the whole plan). It is read as it is, resumed (the other 4 points are measured into
// it), and stays a file of layout 1 that reads back whole.
TEST(OlderLayouts, AFileOfLayout1IsReadAndResumed) {
  const fs::path dir = fresh_directory("layout1");
  const fs::path file = unpacked(kData / "layout1" / "layout1.h5.gz", dir);
  {
    const ResultsFile old = ResultsFile::open_read_only(file);
    EXPECT_EQ(old.read_info().layout_version, 1);
    EXPECT_EQ(old.run_count(), 2u);
  }
  const auto status = run_shell(fmt::format("{} status {}", KS_CLI, file.string()));
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("missing: 4 points"), std::string::npos) << status.output;

  const auto resumed = run_shell(
      mpirun_test_cli(1, fmt::format("run {} --output-dir {} --results-file {} --resume",
                                     (kData / "layout1" / "sweep.yaml").string(), dir.string(), file.string())));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const ResultsFile file_now = ResultsFile::open_read_only(file);
  EXPECT_EQ(file_now.read_info().layout_version, 1);
  EXPECT_FALSE(file_now.read_info().ended_at.empty());
  std::map<std::string, int> passed;
  for (const StoredRun& run : file_now.read_runs()) passed[run.point_id] += run.status == "passed";
  EXPECT_EQ(passed.size(), 6u);
  for (const auto& [point, count] : passed) EXPECT_EQ(count, 1) << point;
  EXPECT_EQ(file_now.read_sessions().size(), 2u);
}

// tests/data/layout7: the results file of shard 0/2 of its sweep (3 of its 6 points), made by
// kernelsweep in results layout 7, before the energy columns. It is read as it is (no energy figure,
// its speed-of-light flags as stored), shown without energy columns, resumed (its shard complete, a
// session is added) and stays a file of layout 7; merged with shard 1/2 measured now (layout 8), it
// gives the 6 points, none with an energy figure (they ran on the CPU), the old rows' flags kept.
TEST(OlderLayouts, AFileOfLayout7IsReadWithoutEnergyResumedAndMerged) {
  const fs::path dir = fresh_directory("layout7");
  const fs::path file = unpacked(kData / "layout7" / "layout7.h5.gz", dir);
  const fs::path sweep = kData / "layout7" / "sweep.yaml";
  const auto expect_no_energy = [](const StoredRun& run) {
    EXPECT_TRUE(std::isnan(run.joules_per_call)) << run.point_id;
    EXPECT_TRUE(std::isnan(run.gflops_per_joule)) << run.point_id;
    EXPECT_TRUE(std::isnan(run.energy_window_s)) << run.point_id;
  };
  {
    const ResultsFile old = ResultsFile::open_read_only(file);
    EXPECT_EQ(old.read_info().layout_version, 7);
    const std::vector<StoredRun> runs = old.read_runs();
    ASSERT_EQ(runs.size(), 3u);
    for (const StoredRun& run : runs) {
      expect_no_energy(run);
      EXPECT_EQ(run.flags, "no-work") << run.point_id;  // layout 7's own columns read as stored
    }
  }
  const auto shown = run_shell(fmt::format("{} show {}", KS_CLI, file.string()));
  EXPECT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_NE(shown.output.find("flags"), std::string::npos) << shown.output;
  EXPECT_EQ(shown.output.find("joules_per_call"), std::string::npos) << shown.output;

  const auto resumed =
      run_shell(mpirun_test_cli(1, fmt::format("run {} --output-dir {} --results-file {} --shard 0/2 --resume",
                                               sweep.string(), dir.string(), file.string())));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  {
    const ResultsFile file_now = ResultsFile::open_read_only(file);
    EXPECT_EQ(file_now.read_info().layout_version, 7);
    EXPECT_EQ(file_now.read_sessions().size(), 2u);
    EXPECT_EQ(file_now.run_count(), 3u);
  }

  const fs::path other_shard = dir / "shard1.h5";
  const auto measured = run_shell(mpirun_test_cli(1, fmt::format("run {} --output-dir {} --results-file {} --shard 1/2",
                                                                 sweep.string(), dir.string(), other_shard.string())));
  ASSERT_EQ(measured.exit_code, 0) << measured.output;
  EXPECT_EQ(ResultsFile::open_read_only(other_shard).read_info().layout_version, kResultsLayoutVersion);
  const fs::path merged = dir / "merged.h5";
  const auto merging =
      run_shell(fmt::format("{} merge {} {} -o {}", KS_CLI, file.string(), other_shard.string(), merged.string()));
  ASSERT_EQ(merging.exit_code, 0) << merging.output;
  std::map<std::string, int> passed;
  for (const StoredRun& run : ResultsFile::open_read_only(merged).read_runs()) {
    passed[run.point_id] += run.status == "passed";
    expect_no_energy(run);
    EXPECT_EQ(run.flags, "no-work") << run.point_id;
  }
  EXPECT_EQ(passed.size(), 6u);
  for (const auto& [point, count] : passed) EXPECT_EQ(count, 1) << point;
}

// A file of 200,000 rows written through the store, of a sweep of 200,000 points: 10 points have no
// row, 50 failed, and 20 failed first and passed on a second row. status reads it a block of rows at
// a time and counts each point once by its latest row; --resume measures the 60 points left, and
// the file then has every point passed.
TEST(LargeFiles, StatusAndResumeOfA200000RowFileWrittenThroughTheStore) {
  constexpr int kPoints = 200'000, kMissing = 10, kFailed = 50, kRerun = 20;
  const fs::path dir = fresh_directory("large_file");
  const std::string text = fmt::format(
      "name: large\nprotocol:\n  warmup_ms: 0\n  rep_ms: 0\n  max_repeat: 1\n"
      "  flush_bytes: 0\noutput:\n  kernelindex_format: jsonl\nkernels:\n"
      "  - kernel: noop\n    grid:\n      id: {{from: 1, to: {}, step: 1}}\n",
      kPoints);
  const fs::path sweep = write_sweep(dir, text);
  const std::vector<std::string> ids = planned_ids(sweep);
  ASSERT_EQ(ids.size(), static_cast<std::size_t>(kPoints));
  const fs::path path = dir / "large.h5";
  {
    RunInfo info;
    info.sweep_name = "large";
    info.sweep_path = sweep.string();
    info.sweep_text = text;
    info.plan_size = kPoints;
    info.kernelsweep_version = "test";
    info.started_at = "2026-12-02T00:00:00.000Z";
    info.world_size = 1;
    ResultsFile file = ResultsFile::create(path, info);
    const auto row = [&](int i, const char* status) {
      StoredRun run;
      run.point_id = ids[i];
      run.kernel = "noop";
      run.implementation = "cpu";
      run.mode = "forward";
      run.params_json = fmt::format("{{\"id\":{}}}", i + 1);
      run.status = status;
      run.started_at = run.ended_at = "2026-12-02T00:00:01.000Z";
      return run;
    };
    std::vector<StoredRun> batch;
    for (int i = 0; i < kPoints - kMissing; ++i) {
      batch.push_back(row(i, i % 2000 == 7 && i / 2000 < kFailed + kRerun ? "failed" : "passed"));
      if (batch.size() == 5000) file.append(batch), batch.clear();
    }
    for (int k = 0; k < kRerun; ++k) batch.push_back(row(2000 * (kFailed + k) + 7, "passed"));  // a later, passed row
    file.append(batch);
    file.flush();
  }
  const auto status = run_shell(fmt::format("{} status {}", KS_CLI, path.string()));
  ASSERT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find(fmt::format("passed   {}", kPoints - kMissing - kFailed)), std::string::npos)
      << status.output;
  EXPECT_NE(status.output.find(fmt::format("failed   {}", kFailed)), std::string::npos) << status.output;
  EXPECT_NE(status.output.find(fmt::format("missing: {} points", kMissing)), std::string::npos) << status.output;
  EXPECT_NE(status.output.find(ids[kPoints - 1]), std::string::npos) << "the missing points are listed by id";
  EXPECT_NE(status.output.find(fmt::format("not passed: {} points", kFailed)), std::string::npos) << status.output;

  const auto resumed =
      run_shell(mpirun_test_cli(2, fmt::format("run {} --output-dir {} --results-file {} --resume --check none",
                                               sweep.string(), dir.string(), path.string())));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find(
                fmt::format("resuming: {} of {} points already passed", kPoints - kMissing - kFailed, kPoints)),
            std::string::npos)
      << resumed.output;
  const ResultsFile file = ResultsFile::open_read_only(path);
  EXPECT_EQ(file.run_count(), static_cast<std::uint64_t>(kPoints - kMissing + kRerun + kMissing + kFailed));
  const std::vector<PointStatus> points = file.point_statuses();
  ASSERT_EQ(points.size(), static_cast<std::size_t>(kPoints));
  for (const PointStatus& point : points) ASSERT_EQ(point.status, "passed") << point_key_hex(point.key);
}

}  // namespace
}  // namespace ks::testing
