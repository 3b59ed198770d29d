// Speed of light on the CPU, end to end under mpirun: every rank calibrates before its first point
// (or reuses what the suite's fixture kept), each point is held against it, and a figure the machine
// cannot reach is flagged, kept, shown, and left out of compare's verdicts; an honest copy is not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "measure/do_bench.h"
#include "store/results_file.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// An honest copy over arrays far beyond the last-level cache, and a sleeper that claims 1,000 GB a
// call of 2 ms (500,000 GB/s: no machine's memory).
std::string sweep(const std::string& name) {
  const std::int64_t mib = std::clamp<std::int64_t>(4 * (cpu_last_level_cache_bytes() >> 20), 64, 512);
  return fmt::format(R"(name: {}
protocol: {{warmup_ms: 5, rep_ms: 60, max_repeat: 50}}
kernels:
  - kernel: stream
    implementations: [cpu]
    grid: {{op: [copy]}}
    fixed: {{mib: {}}}
  - kernel: test_claim
    implementations: [cpu]
    modes: [forward]
    grid: {{claimed_gb: [0, 1000]}}
    fixed: {{run_ms: 2}}
)",
                     name, mib);
}

fs::path run(const fs::path& dir, const std::string& name, const std::string& options = "",
             std::string* output = nullptr) {
  write_file(dir / (name + ".yaml"), sweep(name));
  const auto result = run_shell(mpirun_test_cli(
      1, fmt::format("run {} --output-dir {} {}", (dir / (name + ".yaml")).string(), (dir / name).string(), options)));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  if (output) *output = result.output;
  return dir / name / (name + ".h5");
}

// The rows of `show --format json` with the speed-of-light columns, keyed by kernel and claim.
std::map<std::string, Json> shown(const fs::path& results) {
  const auto out =
      run_command(fmt::format("{} show {} --format json --columns kernel,claimed_gb,gbps,bandwidth_pct,sol_pct,flags",
                              KS_CLI, results.string()));
  EXPECT_EQ(out.exit_code, 0) << out.err;
  std::map<std::string, Json> rows;
  for (const Json& row : Json::parse(out.out))
    rows[row.at("kernel").get<std::string>() +
         (row.at("claimed_gb").is_null() ? "" : " " + row.at("claimed_gb").dump())] = row;
  return rows;
}

TEST(SpeedOfLightRun, AnImpossibleFigureIsFlaggedAndAnHonestCopyStandsBelowTheCalibratedBandwidth) {
  const fs::path dir = fresh_directory("speed_of_light_run");
  std::string output;
  const auto rows = shown(run(dir, "claims", "", &output));
  // The run's own summary counts the flags, and no kernel's best sol% is an implausible point's.
  EXPECT_NE(output.find("flagged: 1 implausible, 1 no-work ("), std::string::npos) << output;
  for (const std::string& line : lines_of(output))
    if (line.starts_with("test_claim ")) EXPECT_TRUE(line.ends_with(" -")) << line;
  ASSERT_EQ(rows.size(), 3u);
  const Json& copy = rows.at("stream");
  EXPECT_EQ(copy.at("flags"), "");
  ASSERT_TRUE(copy.at("sol_pct").is_number()) << copy.dump();
  // Its median against the calibration's fastest repetition: under 150% (not implausible), well above nothing.
  EXPECT_GT(copy.at("sol_pct").get<double>(), 10);
  EXPECT_LT(copy.at("sol_pct").get<double>(), 150);
  EXPECT_DOUBLE_EQ(copy.at("sol_pct").get<double>(), copy.at("bandwidth_pct").get<double>());
  EXPECT_EQ(rows.at("test_claim 1000").at("flags"), "implausible");
  EXPECT_GT(rows.at("test_claim 1000").at("bandwidth_pct").get<double>(), 150);
  EXPECT_EQ(rows.at("test_claim 0").at("flags"), "no-work");
  EXPECT_TRUE(rows.at("test_claim 0").at("sol_pct").is_null());
}

TEST(SpeedOfLightRun, TheCalibrationIsStoredWithTheRanksAndTheEnvironmentAndOffLeavesItOut) {
  const fs::path dir = fresh_directory("speed_of_light_stored");
  const fs::path results = run(dir, "stored");
  const auto ranks = ResultsFile::open_read_only(results).read_ranks();
  ASSERT_EQ(ranks.size(), 1u);
  const Json calibration = Json::parse(ranks[0].calibration);
  EXPECT_EQ(calibration.at("backend"), "cpu");
  EXPECT_GT(calibration.at("memory_gbps").get<double>(), 0);
  EXPECT_GT(calibration.at("tflops").at("fp32").get<double>(), 0);
  EXPECT_TRUE(calibration.at("datasheet").is_null());
  // Each document's environment carries it, outside the digest.
  bool documented = false;
  for (const auto& entry : fs::directory_iterator(dir / "stored" / "kernelindex"))
    if (entry.path().extension() == ".json") {
      const Json document = read_json(entry.path());
      EXPECT_EQ(document.at("environment").at("metadata").at("calibration").at("memory_gbps"),
                calibration.at("memory_gbps"));
      documented = true;
    }
  EXPECT_TRUE(documented);

  const auto off = shown(run(dir, "off", "--calibrate off"));
  for (const auto& [key, row] : off) {
    EXPECT_TRUE(row.at("sol_pct").is_null()) << key;
    EXPECT_EQ(row.at("flags"), "") << key;
  }
  EXPECT_EQ(ResultsFile::open_read_only(dir / "off" / "off.h5").read_ranks().at(0).calibration, "");
}

TEST(SpeedOfLightRun, CompareLeavesAnImplausiblePointOutOfItsVerdictsAndSaysWhy) {
  const fs::path dir = fresh_directory("speed_of_light_compare");
  const fs::path base = run(dir, "base"), next = run(dir, "next");
  const auto out = run_command(fmt::format("{} compare {} {} --format json", KS_CLI, base.string(), next.string()));
  const Json json = Json::parse(out.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out.out << out.err;
  EXPECT_EQ(json.at("summary").at("implausible"), 1);
  for (const Json& point : json.at("points")) {
    const Json params = Json::parse(point.at("params").dump());
    const bool claims = point.at("kernel") == "test_claim" && params.at("claimed_gb") == 1000.0;
    EXPECT_EQ(point.at("label") == "implausible", claims) << point.dump();
    if (claims) {
      EXPECT_TRUE(point.at("ratio").is_null());
      EXPECT_NE(point.at("note").get<std::string>().find("left out: both sides' rates are beyond"), std::string::npos);
    }
  }
}

// Kept in the output folder (here the suite's KERNELSWEEP_CALIBRATION_DIR): a second run reuses it.
TEST(SpeedOfLightRun, ASecondRunReusesTheKeptCalibrationAndFreshMeasuresAgain) {
  const fs::path dir = fresh_directory("speed_of_light_kept");
  const auto env = fmt::format("KERNELSWEEP_CALIBRATION_DIR={} ", (dir / "kept").string());
  const auto calibrate = [&](const std::string& options) {
    const auto out = run_command(env + fmt::format("{} calibrate --json {}", KS_CLI, options));
    EXPECT_EQ(out.exit_code, 0) << out.err;
    return Json::parse(out.out);
  };
  const Json first = calibrate(""), second = calibrate(""), fresh = calibrate("--fresh");
  EXPECT_FALSE(first.at("reused").get<bool>());
  EXPECT_TRUE(second.at("reused").get<bool>());
  EXPECT_EQ(second.at("memory_gbps"), first.at("memory_gbps"));
  EXPECT_FALSE(fresh.at("reused").get<bool>());
  for (const char* key : {"rank", "host", "device", "memory_gbps", "tflops", "datasheet", "seconds"})
    EXPECT_TRUE(first.contains(key)) << key;
}

}  // namespace
}  // namespace ks::testing
