// `kernelsweep compare`: the rule that labels a point (report/compare_rule.h) against resampling
// done the slow way, and the command on results files written through the store, whose samples
// are made here (so every label is known in advance). Real sweeps compared: tests/mpi/compare_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/canonical_json.h"
#include "common/digest.h"
#include "measure/do_bench.h"
#include "report/compare_rule.h"
#include "store/results_file.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Timings as a noisy kernel gives them: a floor, and a skewed spread above it.
std::vector<double> timings(std::mt19937_64& random, std::size_t n, double median_ns, double spread = 0.02) {
  std::lognormal_distribution<double> noise(0.0, spread);
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(median_ns * noise(random));
  return out;
}

// The bootstrap done by drawing resamples: for an odd count the resample's median; for an even
// count one of its two middle values, each with probability 1/2 (the rule's stand-in for their
// average, see compare_rule.h).
std::vector<double> resampled_ratios(const std::vector<double>& base, const std::vector<double>& next, int resamples,
                                     std::mt19937_64& random) {
  const auto resampled_median = [&](const std::vector<double>& values) {
    std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
    std::vector<double> resample(values.size());
    for (double& value : resample) value = values[pick(random)];
    std::sort(resample.begin(), resample.end());
    const std::size_t n = resample.size();
    if (n % 2 == 1) return resample[n / 2];
    return std::bernoulli_distribution(0.5)(random) ? resample[n / 2 - 1] : resample[n / 2];
  };
  std::vector<double> ratios;
  for (int b = 0; b < resamples; ++b) ratios.push_back(resampled_median(next) / resampled_median(base));
  std::sort(ratios.begin(), ratios.end());
  return ratios;
}

TEST(CompareRule, LabelsFollowTheIntervalAgainstTheThreshold) {
  const double t = 0.05;
  EXPECT_EQ(change_of({1.06, 1.40}, t), Change::slower);
  EXPECT_EQ(change_of({0.70, 0.94}, t), Change::faster);  // below 1/1.05 = 0.952
  EXPECT_EQ(change_of({0.96, 1.04}, t), Change::same);
  EXPECT_EQ(change_of({1.01, 1.07}, t), Change::unclear);     // straddles 1.05
  EXPECT_EQ(change_of({0.90, 1.20}, t), Change::unclear);     // wider than the band
  EXPECT_EQ(change_of({0.94, 0.96}, t), Change::unclear);     // straddles 0.952
  EXPECT_EQ(change_of({1.0 / 1.05, 1.05}, t), Change::same);  // the bounds belong to "same"
}

TEST(CompareRule, ExactBootstrapAgreesWithDrawnResamples) {
  std::mt19937_64 random(7);
  for (std::size_t n : {5u, 6u, 15u, 16u, 41u, 100u}) {
    const auto base = timings(random, n, 1e6, 0.05), next = timings(random, n + 3, 1.1e6, 0.05);
    ChangeJudge judge;
    const MedianBootstrap b = judge.median_bootstrap(base), x = judge.median_bootstrap(next);
    const auto drawn = resampled_ratios(base, next, 40000, random);
    // With 40,000 draws the drawn 0.5% point sits between the exact 0.35% and 0.65% points, and
    // likewise at every other level checked (over 7 standard errors of margin).
    for (double q : {0.005, 0.05, 0.5, 0.95, 0.995}) {
      const double from_draws = drawn[static_cast<std::size_t>(q * static_cast<double>(drawn.size()))];
      EXPECT_LE(ratio_quantile(b, x, std::max(q - 0.0015, 1e-6)), from_draws * (1 + 1e-6)) << "n " << n << " q " << q;
      EXPECT_GE(ratio_quantile(b, x, std::min(q + 0.0015, 1 - 1e-6)), from_draws * (1 - 1e-6))
          << "n " << n << " q " << q;
    }
  }
}

TEST(CompareRule, BootstrapProbabilitiesSumToOneAndCoverTheMiddle) {
  ChangeJudge judge;
  for (std::size_t n : {1u, 2u, 5u, 10u, 99u, 100u, 1000u, 20000u}) {
    std::vector<double> samples(n);
    for (std::size_t i = 0; i < n; ++i) samples[i] = 1.0 + static_cast<double>(i);
    const MedianBootstrap m = judge.median_bootstrap(samples);
    ASSERT_EQ(m.values.size(), m.weights->size());
    double total = 0;
    for (double w : *m.weights) {
      EXPECT_GE(w, 0);
      total += w;
    }
    EXPECT_NEAR(total, 1.0, 1e-12) << n;
    EXPECT_DOUBLE_EQ(m.median, quantile_linear(samples, 0.5));
    EXPECT_LE(m.values.front(), m.median);
    EXPECT_GE(m.values.back(), m.median);
    if (n >= 1000) { EXPECT_LT(m.values.size(), n / 2) << "only a window around the middle is kept"; }
  }
}

TEST(CompareRule, SwappingBaseAndNewSwapsFasterAndSlower) {
  std::mt19937_64 random(11);
  ChangeJudge judge;
  const auto mirrored = [](Change c) {
    return c == Change::faster ? Change::slower : c == Change::slower ? Change::faster : c;
  };
  for (double factor : {0.6, 0.9, 0.97, 1.0, 1.03, 1.1, 1.3, 2.0}) {
    const auto base = timings(random, 40, 1e6), next = timings(random, 35, 1e6 * factor);
    const Verdict forward = judge.judge(base, next), backward = judge.judge(next, base);
    EXPECT_EQ(backward.change, mirrored(forward.change)) << factor;
    EXPECT_NEAR(forward.interval.low * backward.interval.high, 1.0, 1e-6) << factor;
  }
}

TEST(CompareRule, ClearChangesAreFoundAndIdenticalSetsAreNeverFasterOrSlower) {
  std::mt19937_64 random(3);
  ChangeJudge judge;
  for (int trial = 0; trial < 20; ++trial) {
    const auto base = timings(random, 30, 1e6);
    EXPECT_EQ(judge.judge(base, timings(random, 30, 1.3e6)).change, Change::slower);
    EXPECT_EQ(judge.judge(base, timings(random, 30, 1e6 / 1.3)).change, Change::faster);
    const Verdict self = judge.judge(base, base);
    EXPECT_NE(self.change, Change::slower);
    EXPECT_NE(self.change, Change::faster);
    EXPECT_NEAR(self.interval.low * self.interval.high, 1.0, 1e-6);  // symmetric about 1
    EXPECT_DOUBLE_EQ(self.ratio, 1.0);
  }
}

// A CPU timer's samples of a short kernel are a few values, most of them one: each bound of the
// interval is then the ratio of two samples, often the point's own ratio, and the interval holds it.
TEST(CompareRule, TightTiedSamplesHaveTheirRatioWithinTheInterval) {
  std::vector<double> base(100, 1663.0), next(100, 1573.0);
  for (std::size_t i = 0; i < 30; ++i) {
    base[i] = 1664.0 + static_cast<double>(i % 3);
    next[i] = 1574.0 + static_cast<double>(i % 4);
  }
  ChangeJudge judge;
  const Verdict verdict = judge.judge(base, next);
  ASSERT_TRUE(verdict.has_interval);
  EXPECT_DOUBLE_EQ(verdict.ratio, 1573.0 / 1663.0);
  EXPECT_LE(verdict.interval.low, verdict.ratio);
  EXPECT_GE(verdict.interval.high, verdict.ratio);
  EXPECT_EQ(verdict.change, Change::faster);
}

TEST(CompareRule, TooFewSamplesAreUnclear) {
  ChangeJudge judge;
  const Verdict verdict = judge.judge({1e6, 1e6, 1e6}, {2e6, 2e6, 2e6, 2e6, 2e6});
  EXPECT_EQ(verdict.change, Change::unclear);
  EXPECT_FALSE(verdict.has_interval);
  EXPECT_DOUBLE_EQ(verdict.ratio, 2.0);
  EXPECT_NE(verdict.why.find("too few samples (3 and 5"), std::string::npos) << verdict.why;
}

TEST(CompareRule, AThresholdOfZeroIsRefused) { EXPECT_THROW(ChangeJudge(ChangeRule{0.0}), std::invalid_argument); }

// --- the command on files made here ---------------------------------------------------------------

struct PointSpec {
  std::string kernel = "test_sleep";
  int id = 0;
  std::string status = "passed";
  std::vector<double> samples_ns;
  std::string protocol = "sha256:protocol-a";
  std::string environment = "sha256:environment-a";
};

std::string params_of(int id) { return canonical_json(Json{{"id", id}, {"run_ms", 1.0}, {"setup_ms", 0.0}}); }
std::string id_of(int id) { return sha256_hex("test_sleep/cpu/forward/" + params_of(id)); }

void write_results(const fs::path& path, const std::vector<PointSpec>& points) {
  RunInfo info;
  info.sweep_name = "made";
  info.sweep_path = "made.yaml";
  info.sweep_text = "name: made\n";
  info.plan_size = static_cast<std::int64_t>(points.size());
  info.kernelsweep_version = "test";
  info.git_commit = "abc";
  info.started_at = "2026-12-01T00:00:00.000Z";
  info.host = "testhost";
  ResultsFile file = ResultsFile::create(path, info);
  std::vector<StoredRun> rows;
  for (const PointSpec& point : points) {
    file.put_protocol(point.protocol, fmt::format(R"({{"spec":{{"name":"do_bench","rep_ms":{}}}}})",
                                                  point.protocol == "sha256:protocol-a" ? 100 : 20));
    file.put_environment(point.environment,
                         R"({"spec":{"hardware":{"product":")" + point.environment.substr(7) + R"("}}})");
    RunRecord r;
    r.kernel = point.kernel;
    r.implementation = "cpu";
    r.mode = "forward";
    r.params_json = params_of(point.id);
    r.point_id = id_of(point.id);
    r.status = point.status;
    r.started_at = r.ended_at = info.started_at;
    r.samples_ns = point.samples_ns;
    if (!r.samples_ns.empty()) {
      r.stats = summarize(r.samples_ns);
      r.n_warmup = 1;
      r.n_repeat = static_cast<std::int64_t>(r.samples_ns.size());
    }
    rows.emplace_back(std::move(r), Citations{point.protocol, point.environment, "sha256:w", "sha256:i"});
  }
  file.append(rows);
  file.finish("2026-12-01T00:01:00.000Z");
}

using Compared = CommandOutput;

Compared compare(const std::string& args) { return run_command(fmt::format("{} compare {}", KS_CLI, args)); }

// BASE and NEW of six points: 1 the same, 2 made 30% slower, 3 made 30% faster, 4 not timed in
// NEW (crashed), 5 only in BASE, 6 only in NEW.
class CompareCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_directory("compare_command");
    std::mt19937_64 random(5);
    write_results(base(), {{.id = 1, .samples_ns = timings(random, 50, 1e6)},
                           {.id = 2, .samples_ns = timings(random, 50, 1e6)},
                           {.id = 3, .samples_ns = timings(random, 50, 1e6)},
                           {.id = 4, .samples_ns = timings(random, 50, 1e6)},
                           {.id = 5, .samples_ns = timings(random, 50, 1e6)}});
    write_results(next(), {{.id = 1, .samples_ns = timings(random, 50, 1e6)},
                           {.id = 2, .samples_ns = timings(random, 50, 1.3e6)},
                           {.id = 3, .samples_ns = timings(random, 50, 1e6 / 1.3)},
                           {.id = 4, .status = "crashed", .samples_ns = {}},
                           {.id = 6, .samples_ns = timings(random, 50, 1e6)}});
  }
  fs::path base() const { return dir_ / "base.h5"; }
  fs::path next() const { return dir_ / "new.h5"; }
  std::string files() const { return base().string() + " " + next().string(); }
  fs::path dir_;
};

std::map<int, Json> points_by_id(const Json& out) {
  std::map<int, Json> by_id;
  for (const Json& point : out.at("points")) by_id[point.at("params").at("id").get<int>()] = point;
  return by_id;
}

TEST_F(CompareCommand, LabelsEachPointAndCountsThem) {
  const Compared run = compare(files() + " --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json out = Json::parse(run.out);
  auto by_id = points_by_id(out);
  EXPECT_EQ(by_id[1].at("label"), "same");
  EXPECT_EQ(by_id[2].at("label"), "slower");
  EXPECT_NEAR(by_id[2].at("ratio").get<double>(), 1.3, 0.05);
  EXPECT_GT(by_id[2].at("interval")[0].get<double>(), 1.05);
  EXPECT_EQ(by_id[3].at("label"), "faster");
  EXPECT_EQ(by_id[4].at("label"), "untimed");
  EXPECT_EQ(by_id[4].at("new_status"), "crashed");
  EXPECT_EQ(by_id[5].at("label"), "removed");
  EXPECT_EQ(by_id[6].at("label"), "added");
  EXPECT_EQ(out.at("summary"), (Json{{"slower", 1},
                                     {"faster", 1},
                                     {"same", 1},
                                     {"unclear", 0},
                                     {"untimed", 1},
                                     {"implausible", 0},
                                     {"added", 1},
                                     {"removed", 1}}));
  EXPECT_TRUE(out.at("warnings").empty());
  EXPECT_DOUBLE_EQ(out.at("rule").at("threshold_percent").get<double>(), 5.0);
  // Slowest first, then the points without a ratio.
  std::vector<int> order;
  for (const Json& point : out.at("points")) order.push_back(point.at("params").at("id").get<int>());
  EXPECT_EQ(order, (std::vector<int>{2, 1, 3, 4, 6, 5}));
}

TEST_F(CompareCommand, TableAndMarkdownCarryTheSameContent) {
  const Compared table = compare(files());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("rule: ratio = NEW median / BASE median"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("99% interval"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("4 points matched: 1 slower, 1 faster, 1 same, 0 unclear, 1 not timed on both sides; "
                           "1 added, 1 removed"),
            std::string::npos)
      << table.out;
  // The slower point's row comes before the same one's, which comes before the faster one's.
  std::vector<std::string> labels;
  std::stringstream lines(table.out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("test_sleep", 0) == 0) labels.push_back(line);
  ASSERT_EQ(labels.size(), 6u) << table.out;
  const auto has_label = [](const std::string& line, const std::string& label) {
    return line.find("  " + label + "  ") != std::string::npos || line.ends_with("  " + label);
  };
  EXPECT_TRUE(has_label(labels[0], "slower")) << table.out;
  EXPECT_TRUE(has_label(labels[1], "same")) << table.out;
  EXPECT_TRUE(has_label(labels[2], "faster")) << table.out;

  const Compared md = compare(files() + " --format md");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(
      md.out.find("| kernel | implementation | mode | params | base ms | new ms | ratio | change | 99% interval | "
                  "label | note |"),
      std::string::npos)
      << md.out;
  EXPECT_NE(md.out.find("| slower |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("new crashed"), std::string::npos) << md.out;
}

TEST_F(CompareCommand, FailAboveGatesOnSlowerPointsOnly) {
  EXPECT_EQ(compare(files()).exit_code, 0);
  const Compared gated = compare(files() + " --fail-above 10");
  EXPECT_EQ(gated.exit_code, 1) << gated.err;
  EXPECT_NE(gated.err.find("1 point is slower by more than 10% (--fail-above)"), std::string::npos) << gated.err;
  EXPECT_EQ(compare(files() + " --fail-above 50").exit_code, 0);  // 30% slower is not more than 50%
  EXPECT_EQ(compare(next().string() + " " + base().string() + " --fail-above 10").exit_code, 1)
      << "swapped, the faster point is the slower one";
}

TEST_F(CompareCommand, WhereKeepsPointsOnBothSides) {
  const Compared run = compare(files() + " --format json --where 'id=2|5'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto by_id = points_by_id(Json::parse(run.out));
  EXPECT_EQ(by_id.size(), 2u);
  EXPECT_EQ(by_id.at(2).at("label"), "slower");
  EXPECT_EQ(by_id.at(5).at("label"), "removed");
}

TEST_F(CompareCommand, ALargerThresholdTurnsTheChangesIntoSame) {
  const Compared run = compare(files() + " --format json --threshold 50");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto by_id = points_by_id(Json::parse(run.out));
  EXPECT_EQ(by_id[2].at("label"), "same");
  EXPECT_EQ(by_id[3].at("label"), "same");
}

TEST_F(CompareCommand, DifferentProtocolsAndEnvironmentsAreSaid) {
  std::mt19937_64 random(9);
  const fs::path other = dir_ / "other.h5";
  write_results(other, {{.id = 1, .samples_ns = timings(random, 50, 1e6), .protocol = "sha256:protocol-b"},
                        {.id = 2, .samples_ns = timings(random, 50, 1e6), .environment = "sha256:environment-b"},
                        {.id = 3, .samples_ns = timings(random, 50, 1e6)}});
  const Compared table = compare(base().string() + " " + other.string());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("WARNING: 1 of 3 matched points cite different protocols in BASE and NEW (a comparison "
                           "across timing methods); 1 point: protocol-a -> protocol-b: rep_ms: 100 -> 20"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("WARNING: 1 of 3 matched points cite different environments in BASE and NEW (a comparison "
                           "across machines or software); 1 point: environment- -> environment-: hardware.product: "
                           "environment-a -> environment-b"),
            std::string::npos)
      << table.out;
  const Json out = Json::parse(compare(base().string() + " " + other.string() + " --format json").out);
  const auto by_id = points_by_id(out);
  EXPECT_TRUE(by_id.at(1).at("protocol_differs").get<bool>());
  EXPECT_EQ(by_id.at(1).at("note"), "protocol differs");
  EXPECT_TRUE(by_id.at(2).at("environment_differs").get<bool>());
  EXPECT_FALSE(by_id.at(3).at("protocol_differs").get<bool>());
  EXPECT_EQ(out.at("warnings").size(), 2u);
}

TEST_F(CompareCommand, BadInputIsOneLineAndExitTwo) {
  const auto one_line = [](const std::string& text) { return std::count(text.begin(), text.end(), '\n') == 1; };
  const Compared missing = compare(base().string() + " " + (dir_ / "none.h5").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(one_line(missing.err)) << missing.err;
  EXPECT_NE(missing.err.find("none.h5"), std::string::npos) << missing.err;

  write_file(dir_ / "text.h5", "not HDF5\n");
  const Compared not_results = compare((dir_ / "text.h5").string() + " " + next().string());
  EXPECT_EQ(not_results.exit_code, 2);
  EXPECT_TRUE(one_line(not_results.err)) << not_results.err;
  EXPECT_NE(not_results.err.find("text.h5"), std::string::npos) << not_results.err;

  const Compared bad_where = compare(files() + " --where kernel");
  EXPECT_EQ(bad_where.exit_code, 2);
  EXPECT_TRUE(one_line(bad_where.err)) << bad_where.err;
  EXPECT_NE(bad_where.err.find("--where"), std::string::npos) << bad_where.err;

  const Compared bad_threshold = compare(files() + " --threshold 0");
  EXPECT_EQ(bad_threshold.exit_code, 2);
  EXPECT_TRUE(one_line(bad_threshold.err)) << bad_threshold.err;
}

}  // namespace
}  // namespace ks::testing
