// `kernelsweep report` against the machine, end to end on the CPU: docs/report.md's example sweep is
// run under mpirun (its rank calibrated, or the suite's kept calibration reused); its report lists the
// implausible and no-work points before the kernels, draws gemm's roofline under the roofs of the
// rank's calibration, and names a rank whose calibration is 20% below its peers', and none where no
// rank is.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "store/results_file.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr const char* kExample = "ReportSpeedOfLight.FlaggedPointsComeFirstAndTheRooflineHasTheCalibratedRoofs";

// The fenced blocks of docs/report.md marked as covered by `test`, in order.
std::vector<std::string> documented_blocks(const std::string& test) {
  const auto lines = lines_of(read_text(fs::path(KS_SOURCE_DIR) / "docs" / "report.md"));
  std::vector<std::string> blocks;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].find("<!-- example: covered by " + test + " -->") == std::string::npos) continue;
    std::size_t at = i + 1;
    while (at < lines.size() && lines[at].rfind("```", 0) != 0) ++at;
    std::string block;
    for (++at; at < lines.size() && lines[at].rfind("```", 0) != 0; ++at) block += lines[at] + "\n";
    blocks.push_back(block);
  }
  return blocks;
}

// The page's example sweep, run once on one rank for the tests of this file.
const fs::path& example_results() {
  static const fs::path results = [] {
    const fs::path dir = fresh_directory("report_speed_of_light");
    const auto blocks = documented_blocks(kExample);
    if (blocks.empty())
      throw std::runtime_error("docs/report.md has no example sweep covered by " + std::string(kExample));
    write_file(dir / "roofline.yaml", blocks.front());
    const auto run = run_shell(mpirun_test_cli(
        1, fmt::format("run {} --output-dir {}", (dir / "roofline.yaml").string(), (dir / "out").string())));
    if (run.exit_code != 0) throw std::runtime_error("the example sweep failed:\n" + run.output);
    return dir / "out" / "roofline.h5";
  }();
  return results;
}

CommandResult report(const fs::path& results, const fs::path& out) {
  return run_shell(fmt::format("{} report {} -o {}", KS_CLI, results.string(), out.string()));
}

// Numbers vary from run to run: each is N, so that a page's excerpt compares by its form.
std::string numbers_as_n(const std::string& text) {
  return std::regex_replace(text, std::regex(R"re(-?[0-9]+(\.[0-9]+)?(e[+-][0-9]+)?)re"), "N");
}

// The lines of a datablock of the gnuplot script: "x y" each.
std::vector<std::pair<double, double>> datablock(const std::string& script, const std::string& name) {
  std::vector<std::pair<double, double>> points;
  const auto start = script.find(name + " << EOD\n");
  if (start == std::string::npos) return points;
  std::istringstream in(script.substr(start + name.size() + 8));
  for (std::string line; std::getline(in, line) && line != "EOD";) {
    double x = 0, y = 0;
    std::istringstream(line) >> x >> y;
    points.emplace_back(x, y);
  }
  return points;
}

TEST(ReportSpeedOfLight, FlaggedPointsComeFirstAndTheRooflineHasTheCalibratedRoofs) {
  const fs::path& results = example_results();
  const fs::path out = results.parent_path() / "report";
  const auto r = report(results, out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string markdown = read_text(out / "report.md"), html = read_text(out / "index.html");

  // The flagged points, before the kernels: the impossible claim, then the claim of nothing.
  const auto flagged = markdown.find("## Flagged points"), first_kernel = markdown.find("## gemm");
  ASSERT_NE(flagged, std::string::npos) << markdown;
  EXPECT_LT(flagged, first_kernel);
  EXPECT_LT(html.find("<section id=\"flagged\">"), html.find("<section id=\"kernel-gemm\">"));
  const std::string section = markdown.substr(flagged, first_kernel - flagged);
  const auto implausible =
      section.find("| test_claim | cpu | forward | claimed_gb=1000 id=0 run_ms=2 setup_ms=0 | 0 |");
  const auto no_work = section.find("| test_claim | cpu | forward | claimed_gb=0 id=0 run_ms=2 setup_ms=0 | 0 |");
  ASSERT_NE(implausible, std::string::npos) << section;
  ASSERT_NE(no_work, std::string::npos) << section;
  EXPECT_LT(implausible, no_work);
  const std::string implausible_row = section.substr(implausible, section.find('\n', implausible) - implausible);
  EXPECT_NE(implausible_row.find(" GB/s | implausible | a rate above 1.5 times"), std::string::npos) << implausible_row;
  // gemm's small points fit in the cache: in-cache says why, and is no reason to list them.
  EXPECT_EQ(section.find("| gemm |"), std::string::npos) << section;
  // The page's excerpt of this section is what the report writes, but for its figures.
  const auto blocks = documented_blocks(kExample);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_NE(numbers_as_n(markdown).find(numbers_as_n(blocks[1])), std::string::npos) << section;

  // The roofs are the rank's calibration, as sol_pct holds the points to it: a CPU's fp32 rate.
  const auto ranks = ResultsFile::open_read_only(results).read_ranks();
  ASSERT_EQ(ranks.size(), 1u);
  const Json calibration = Json::parse(ranks[0].calibration);
  const double memory_gbps = calibration.at("memory_gbps").get<double>();
  const double fp32 = calibration.at("tflops").at("fp32").get<double>();
  const std::string script = read_text(out / "plots" / "plots.gp");
  EXPECT_NE(script.find(fmt::format("memory_gbps {:.9g}, tflops.fp32 {:.9g}", memory_gbps, fp32)), std::string::npos);
  const auto roof = datablock(script, "$roof_gemm_roofline_0");
  ASSERT_EQ(roof.size(), 3u) << script;  // the axis's ends and the ridge between them
  EXPECT_NEAR(roof.front().second / roof.front().first * 1e3, memory_gbps, 1e-6 * memory_gbps);
  EXPECT_NEAR(roof[1].second, fp32, 1e-6 * fp32);
  EXPECT_NEAR(roof[1].first, fp32 * 1e3 / memory_gbps, 1e-6 * roof[1].first);
  EXPECT_NEAR(roof.back().second, fp32, 1e-6 * fp32);
  // A marker per gemm point, at its FLOPs per byte and its TFLOP/s.
  std::vector<std::pair<double, double>> expected;
  for (const StoredRun& run : ResultsFile::open_read_only(results).read_runs())
    if (run.kernel == "gemm") expected.emplace_back(run.flops / run.bytes, run.tflops);
  std::sort(expected.begin(), expected.end());
  const auto drawn = datablock(script, "$points_gemm_roofline_0");
  ASSERT_EQ(drawn.size(), expected.size()) << script;
  for (std::size_t i = 0; i < drawn.size(); ++i) {
    EXPECT_NEAR(drawn[i].first, expected[i].first, 1e-6 * expected[i].first);
    EXPECT_NEAR(drawn[i].second, expected[i].second, 1e-6 * expected[i].second);
  }
  const std::string svg = read_text(out / "plots" / "gemm-roofline.svg");
  EXPECT_NE(svg.find(">roof fp32: "), std::string::npos);
  EXPECT_NE(html.find("gemm: roofline on "), std::string::npos);
  // A kernel without FLOPs has none, and says why.
  EXPECT_NE(markdown.find("No roofline: its points count bytes but no FLOPs"), std::string::npos);
  EXPECT_FALSE(fs::exists(out / "plots" / "test_claim-roofline.svg"));
  // The points tables carry sol_pct and flags; one rank, no slow ranks.
  EXPECT_NE(markdown.find("| sol_pct | flags |"), std::string::npos);
  EXPECT_EQ(markdown.find("Slow ranks"), std::string::npos);
  EXPECT_EQ(html.find("Slow ranks"), std::string::npos);
}

// The example's points as measured by five ranks, rank 0 and rank 1 sharing them, whose
// calibrations are rank 0's with each rank's memory bandwidth scaled by `memory_scale[rank]`.
fs::path five_ranks(const fs::path& measured, const std::string& name, const std::vector<double>& memory_scale) {
  const fs::path path = measured.parent_path() / (name + ".h5");
  fs::remove(path);
  const ResultsFile source = ResultsFile::open_read_only(measured);
  RunInfo info = source.read_info();
  info.world_size = static_cast<std::int32_t>(memory_scale.size());
  ResultsFile file = ResultsFile::create(path, info);
  for (const auto& document : source.read_environments()) file.put_environment(document.digest, document.json);
  for (const auto& document : source.read_protocols()) file.put_protocol(document.digest, document.json);
  const RankInfo measured_rank = source.read_ranks().at(0);
  for (std::size_t r = 0; r < memory_scale.size(); ++r) {
    Json calibration = Json::parse(measured_rank.calibration);
    calibration["rank"] = r;
    calibration["host"] = fmt::format("node{}", r);
    calibration["memory_gbps"] = calibration.at("memory_gbps").get<double>() * memory_scale[r];
    RankInfo rank = measured_rank;
    rank.rank = static_cast<std::int32_t>(r);
    rank.host = fmt::format("node{}", r);
    rank.calibration = calibration.dump();
    file.put_rank(rank);
  }
  std::vector<StoredRun> batch;
  for (StoredRun run : source.read_runs()) {
    run.samples_ns = source.read_samples(run.samples_offset, run.samples_count);
    run.rank = run.kernel == "test_claim" ? 1 : 0;
    batch.push_back(run);
  }
  file.append(batch);
  file.finish(info.ended_at);
  return path;
}

TEST(ReportSpeedOfLight, NamesTheSlowRanksWithTheirFiguresAndWhetherTheyMeasuredAnyPoints) {
  const fs::path& measured = example_results();
  // Ranks 1 and 4 at 80% of the others' memory bandwidth; rank 1 measured test_claim's 2 points.
  const fs::path slow = five_ranks(measured, "slow", {1, 0.8, 1, 1, 0.8});
  const fs::path out = slow.parent_path() / "report-slow";
  const auto r = report(slow, out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string markdown = read_text(out / "report.md"), html = read_text(out / "index.html");
  const auto heading = markdown.find("## Slow ranks");
  ASSERT_NE(heading, std::string::npos) << markdown;
  EXPECT_LT(heading, markdown.find("## gemm"));
  const std::string section = markdown.substr(heading, markdown.find("\n## ", heading + 1) - heading);
  const std::regex rank_1(
      R"re(- rank 1 on node1 \(.+\): memory_gbps [0-9.e+]+ is 20\.0% below the median of 5 \([0-9.e+]+\); it measured 2 points\.)re");
  const std::regex rank_4(
      R"re(- rank 4 on node4 \(.+\): memory_gbps [0-9.e+]+ is 20\.0% below the median of 5 \([0-9.e+]+\); it measured no points\.)re");
  EXPECT_TRUE(std::regex_search(section, rank_1)) << section;
  EXPECT_TRUE(std::regex_search(section, rank_4)) << section;
  for (const char* peer : {"rank 0 ", "rank 2 ", "rank 3 "}) EXPECT_EQ(section.find(peer), std::string::npos) << peer;
  EXPECT_LT(html.find("<section id=\"slow-ranks\">"), html.find("<section id=\"kernel-gemm\">"));

  const fs::path even = five_ranks(measured, "even", {1, 1, 1, 1, 1});
  const fs::path even_out = even.parent_path() / "report-even";
  ASSERT_EQ(report(even, even_out).exit_code, 0);
  EXPECT_EQ(read_text(even_out / "report.md").find("Slow ranks"), std::string::npos);
  EXPECT_EQ(read_text(even_out / "index.html").find("slow-ranks"), std::string::npos);
}

}  // namespace
}  // namespace ks::testing
