// Results files that a run did not just write: damaged ones, which every reader refuses without a
// crash, a hang or a change to the file, and files of an older layout, which are read and resumed.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

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
// message naming the file, and the file left byte for byte as it was.
TEST(DamagedFiles, EveryReaderRefusesEveryFileOfTheCorpus) {
  const fs::path dir = fresh_directory("damaged_corpus");
  std::vector<fs::path> corpus;
  for (const auto& entry : fs::directory_iterator(kData / "damaged"))
    if (entry.path().string().ends_with(".h5.gz")) corpus.push_back(entry.path());
  ASSERT_GE(corpus.size(), 20u) << "the corpus is missing: tests/data/damaged/make_corpus.py makes it";
  const fs::path sweep = kData / "damaged" / "sweep.yaml";
  for (const fs::path& gzipped : corpus) {
    SCOPED_TRACE(gzipped.filename().string());
    const fs::path file = unpacked(gzipped, dir);
    const std::string before = read_text(file);
    const std::map<std::string, std::string> commands = {
        {"status", fmt::format("{} status {}", KS_CLI, file.string())},
        {"show", fmt::format("{} show {}", KS_CLI, file.string())},
        // Without mpirun (one rank of its own): the refusal comes before any measuring, and mpirun's
        // start would take most of the test's time.
        {"resume", fmt::format("{} run {} --output-dir {} --results-file {} --resume", KS_CLI, sweep.string(),
                               dir.string(), file.string())},
    };
    for (const auto& [name, command] : commands) {
      const auto r = run_shell(command);
      EXPECT_TRUE(r.exit_code == 1 || r.exit_code == 2) << name << " exit code " << r.exit_code << ":\n" << r.output;
      EXPECT_NE(r.output.find(file.string()), std::string::npos) << name << ": the message names the file\n" << r.output;
      EXPECT_EQ(read_text(file), before) << name << " changed a damaged file";
    }
    fs::remove(file);
  }
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

  const auto resumed = run_shell(mpirun_test_cli(
      1, fmt::format("run {} --output-dir {} --results-file {} --resume", (kData / "layout1" / "sweep.yaml").string(),
                     dir.string(), file.string())));
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

}  // namespace
}  // namespace ks::testing
