// `kernelsweep compare` on real sweeps under mpirun: one build run twice (nothing changed), a run
// whose sleeper takes 30% longer per call, and two runs under different protocols.
//
// What is asserted is what noise cannot move on a loaded 2-core machine: sleeps are stable from one
// run to the next in a way busy CPU work is not (bench/results/compare-cpu2.md measured both), so
// the sleepers carry the verdicts asserted, and the CPU gemm points are held only to the rule
// (each label follows from its interval).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/canonical_json.h"
#include "store/results_file.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr double kThreshold = 0.05;  // compare's default --threshold, 5%

// A sweep file without its name: run_sweep names it after the run.
std::string sweep(const std::string& protocol, const std::string& sleepers) {
  return fmt::format(R"(protocol: {}
kernels:
{}  - kernel: gemm
    implementations: [cpu]
    grid: {{M: [16, 32], K: [16, 32]}}
    fixed: {{N: 16, dtype: fp32}}
)",
                     protocol, sleepers);
}

constexpr const char* kProtocol = "{warmup_ms: 5, rep_ms: 120, max_repeat: 100, flush_bytes: 0}";
// For the verdicts on sleepers, 300 ms of 5 ms sleeps, about 55 samples a point: with 120 ms (18
// samples) a few oversleeps of a loaded machine (2 cores, four tests at once) widened the interval of
// a 30% slower sleeper's ratio to [0.65, 1.30], and it read as unclear.
constexpr const char* kVerdictProtocol = "{warmup_ms: 5, rep_ms: 300, max_repeat: 200, flush_bytes: 0}";

// Sleeps long beside the scheduler's wake-up delays: on a loaded machine (a sanitized build beside
// other tests) a 1 ms sleep took 1.2 ms with a 99% interval of the ratio 40% wide, and 30% longer
// sleeps read as only 17% slower (the overhead adds, it does not scale).
constexpr double kSleepMs = 5.0;

// Sleepers id FROM..TO at run_ms MS.
std::string sleepers(int from, int to, double ms) {
  return fmt::format(R"(  - kernel: test_sleep
    implementations: [cpu]
    modes: [forward]
    grid: {{id: {{from: {}, to: {}, step: 1}}}}
    fixed: {{run_ms: {:.1f}}}
)",
                     from, to, ms);
}

fs::path run_sweep(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path file = dir / (name + ".yaml");
  write_file(file, fmt::format("name: {}\n{}", name, text));
  const auto run =
      run_shell(mpirun_test_cli(2, fmt::format("run {} --output-dir {}", file.string(), (dir / name).string())));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  return dir / name / (name + ".h5");
}

struct Compared {
  int exit_code = -1;
  Json json;
  std::string err;
};

Compared compare_json(const fs::path& base, const fs::path& next, const std::string& options = "") {
  const auto run =
      run_command(fmt::format("{} compare {} {} --format json {}", KS_CLI, base.string(), next.string(), options));
  Compared compared{run.exit_code, Json::parse(run.out, nullptr, false), run.err};
  EXPECT_FALSE(compared.json.is_discarded()) << run.out << run.err;
  return compared;
}

// Every label must follow from its interval by the rule (docs/compare.md).
void expect_labels_follow_intervals(const Json& points) {
  for (const Json& point : points) {
    const std::string label = point.at("label");
    if (point.at("interval").is_null()) {
      EXPECT_TRUE(label == "unclear" || label == "untimed" || label == "added" || label == "removed") << point.dump();
      continue;
    }
    const double low = point.at("interval")[0], high = point.at("interval")[1];
    const double up = 1 + kThreshold, down = 1 / (1 + kThreshold);
    EXPECT_LE(low, point.at("ratio").get<double>() * (1 + 1e-9)) << point.dump();
    EXPECT_GE(high, point.at("ratio").get<double>() * (1 - 1e-9)) << point.dump();
    if (label == "slower") EXPECT_GT(low, up) << point.dump();
    else if (label == "faster") EXPECT_LT(high, down) << point.dump();
    else if (label == "same") EXPECT_TRUE(low >= down && high <= up) << point.dump();
    else EXPECT_EQ(label, "unclear") << point.dump();
  }
}

TEST(CompareRuns, OneBuildRunTwiceFindsNoSleeperFasterOrSlower) {
  const fs::path dir = fresh_directory("compare_one_build");
  const std::string text = sweep(kVerdictProtocol, sleepers(1, 6, kSleepMs));
  const fs::path first = run_sweep(dir, "first", text), second = run_sweep(dir, "second", text);
  const Compared compared = compare_json(first, second);
  ASSERT_EQ(compared.exit_code, 0) << compared.err;
  const Json& out = compared.json;
  EXPECT_TRUE(out.at("warnings").empty()) << out.at("warnings").dump();  // one machine, one protocol
  EXPECT_EQ(out.at("summary").at("added"), 0);
  EXPECT_EQ(out.at("summary").at("removed"), 0);
  EXPECT_EQ(out.at("summary").at("untimed"), 0);
  std::size_t sleepers_seen = 0;
  for (const Json& point : out.at("points")) {
    if (point.at("kernel") != "test_sleep") continue;
    ++sleepers_seen;
    EXPECT_NE(point.at("label"), "slower") << point.dump();
    EXPECT_NE(point.at("label"), "faster") << point.dump();
  }
  EXPECT_EQ(sleepers_seen, 6u);
  expect_labels_follow_intervals(out.at("points"));
}

// NEW is a run of the same sweep in which sleepers 1 to 3 sleep 30% longer. A point's id
// digests all its parameters, so those sleepers are other points in that run; NEW is that run's
// file with them under the ids (and parameters) of the shorter points they stand for: what a build
// that made those points 30% slower would have written.
fs::path with_base_identities(const fs::path& base, const fs::path& slower_run, const fs::path& out) {
  std::map<std::string, std::pair<std::string, std::string>> identity_by_params;  // params without run_ms
  const auto key_of = [](const RunRecord& r) {
    Json params = Json::parse(r.params_json);
    params.erase("run_ms");
    return r.kernel + r.implementation + r.mode + canonical_json(params);
  };
  for (const StoredRun& r : ResultsFile::open_read_only(base).read_runs())
    identity_by_params[key_of(r)] = {r.point_id, r.params_json};
  const ResultsFile source = ResultsFile::open_read_only(slower_run);
  ResultsFile file = ResultsFile::create(out, source.read_info());
  for (const auto& d : source.read_protocols()) file.put_protocol(d.digest, d.json);
  for (const auto& d : source.read_environments()) file.put_environment(d.digest, d.json);
  std::vector<StoredRun> rows = source.read_runs();
  for (StoredRun& r : rows) {
    r.samples_ns = source.read_samples(r.samples_offset, r.samples_count);
    std::tie(r.point_id, r.params_json) = identity_by_params.at(key_of(r));
  }
  file.append(rows);
  file.finish(source.read_info().ended_at);
  return out;
}

TEST(CompareRuns, SleepersMadeThirtyPercentSlowerAreSlowerAndFailTheGate) {
  const fs::path dir = fresh_directory("compare_slower");
  const fs::path base = run_sweep(dir, "base", sweep(kVerdictProtocol, sleepers(1, 6, kSleepMs)));
  const fs::path slower_run =
      run_sweep(dir, "slower", sweep(kVerdictProtocol, sleepers(1, 3, 1.3 * kSleepMs) + sleepers(4, 6, kSleepMs)));
  const fs::path next = with_base_identities(base, slower_run, dir / "new.h5");

  const Compared compared = compare_json(base, next);
  ASSERT_EQ(compared.exit_code, 0) << compared.err;
  EXPECT_EQ(compared.json.at("summary").at("added"), 0);
  for (const Json& point : compared.json.at("points")) {
    if (point.at("kernel") != "test_sleep") continue;
    if (point.at("params").at("id").get<int>() <= 3) EXPECT_EQ(point.at("label"), "slower") << point.dump();
    else EXPECT_NE(point.at("label"), "slower") << point.dump();
  }
  expect_labels_follow_intervals(compared.json.at("points"));

  const Compared gated = compare_json(base, next, "--fail-above 10 --where kernel=test_sleep");
  EXPECT_EQ(gated.exit_code, 1) << gated.err;
  EXPECT_NE(gated.err.find("3 points are slower by more than 10% (--fail-above)"), std::string::npos) << gated.err;
  EXPECT_EQ(compare_json(base, next, "--where kernel=test_sleep").exit_code, 0);
}

TEST(CompareRuns, RunsUnderDifferentProtocolsAreSaidToBe) {
  const fs::path dir = fresh_directory("compare_protocols");
  const fs::path base = run_sweep(dir, "base", sweep(kProtocol, sleepers(1, 2, kSleepMs)));
  const fs::path next = run_sweep(
      dir, "next", sweep("{warmup_ms: 5, rep_ms: 100, max_repeat: 100, flush_bytes: 0}", sleepers(1, 2, kSleepMs)));
  const Compared compared = compare_json(base, next);
  ASSERT_EQ(compared.exit_code, 0) << compared.err;
  ASSERT_EQ(compared.json.at("warnings").size(), 1u) << compared.json.at("warnings").dump();
  const std::string warning = compared.json.at("warnings")[0];
  EXPECT_NE(warning.find("6 of 6 matched points cite different protocols"), std::string::npos) << warning;
  EXPECT_NE(warning.find("measurement.rep_ms: 120 -> 100"), std::string::npos) << warning;
  for (const Json& point : compared.json.at("points")) {
    EXPECT_TRUE(point.at("protocol_differs").get<bool>()) << point.dump();
    EXPECT_FALSE(point.at("environment_differs").get<bool>()) << point.dump();
  }

  const auto table = run_shell(fmt::format("{} compare {} {}", KS_CLI, base.string(), next.string()));
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("WARNING: 6 of 6 matched points cite different protocols"), std::string::npos)
      << table.output;
}

}  // namespace
}  // namespace ks::testing
