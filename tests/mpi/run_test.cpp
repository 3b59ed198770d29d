// `kernelsweep run` under the real mpirun, on the CPU path: 1, 2 and 4 ranks; crashes, hangs and
// errors inside points; a job killed part way and resumed; the dynamic queue against static.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/processes.h"
#include "kernelindex/document_reader.h"
#include "kernelindex/document_writer.h"
#include "kernelindex/kernelindex.h"
#include "kernelindex/pending_documents.h"
#include "measure/do_bench.h"
#include "store/results_file.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Every rank count must see: each planned point exactly once in /runs, samples where /runs says,
// one document per run whose digests recompute.
class RunOnRanks : public ::testing::TestWithParam<int> {};

TEST_P(RunOnRanks, EveryPointLandsOnceWithItsSamplesAndDocument) {
  const int ranks = GetParam();
  const fs::path dir = fresh_directory(fmt::format("run_on_{}_ranks", ranks));
  const fs::path sweep = write_sweep(dir, quick_sweep("mixed", kSleepAndCpuGemmKernels));
  const auto ids = planned_ids(sweep);
  ASSERT_EQ(ids.size(), 6u * 2 * 2 + 4u);

  const auto run =
      run_shell(mpirun_test_cli(ranks, fmt::format("run {} --output-dir {}", sweep.string(), dir.string())));
  ASSERT_EQ(run.exit_code, 0) << run.output;

  const ResultsFile file = ResultsFile::open_read_only(dir / "mixed.h5");
  EXPECT_EQ(file.read_info().world_size, ranks);
  EXPECT_FALSE(file.read_info().ended_at.empty());
  const auto rows = file.read_runs();
  std::map<std::string, int> seen;
  std::set<int> ranks_used;
  for (const StoredRun& r : rows) {
    ++seen[r.point_id];
    ranks_used.insert(r.rank);
    if (r.implementation == "gpu_only") {
      EXPECT_EQ(r.status, "skipped") << r.point_id;  // no GPU here
      EXPECT_NE(r.message.find("GPU"), std::string::npos) << r.message;
      continue;
    }
    EXPECT_EQ(r.status, "passed") << r.point_id << " " << r.message;
    ASSERT_EQ(r.samples_count, static_cast<std::uint64_t>(r.n_repeat));
    const auto samples = file.read_samples(r.samples_offset, r.samples_count);
    EXPECT_DOUBLE_EQ(*std::min_element(samples.begin(), samples.end()), r.stats.min_ns);
    EXPECT_DOUBLE_EQ(*std::max_element(samples.begin(), samples.end()), r.stats.max_ns);
    EXPECT_GE(r.stats.median_ns, r.stats.min_ns);
    EXPECT_FALSE(r.cited.protocol_digest.empty());
  }
  EXPECT_EQ(rows.size(), ids.size());
  for (const auto& id : ids) EXPECT_EQ(seen[id], 1) << id;
  if (ranks > 1) { EXPECT_GT(ranks_used.size(), 1u) << "the work should spread over the ranks"; }

  std::size_t documents = 0;
  for (const auto& entry : fs::directory_iterator(dir / "kernelindex")) {
    const Json object = read_json(entry.path());
    EXPECT_TRUE(digest_mismatches(object).empty()) << entry.path();
    EXPECT_EQ(object.at("run").at("apiVersion"), "kernelindex.dev/v1alpha1");
    ++documents;
  }
  EXPECT_EQ(documents, ids.size());
}

INSTANTIATE_TEST_SUITE_P(Ranks, RunOnRanks, ::testing::Values(1, 2, 4));

// The protocol's quantiles, not Triton's three, reach /quantiles and the documents; min_repeat
// raises the repetitions that rep_ms 0 would leave at one.
TEST(ProtocolQuantiles, TheQuantilesAskedForAreStoredAndDocumentedAndMinRepeatHolds) {
  const fs::path dir = fresh_directory("protocol_quantiles");
  const fs::path sweep = write_sweep(dir, R"(name: quantiles
protocol: {warmup_ms: 0, rep_ms: 0, min_repeat: 12, flush_bytes: 0, quantiles: [0.5, 0.1, 0.9]}
kernels:
  - kernel: gemm
    implementations: [cpu]
    grid: {M: [16, 32], N: [8], K: [24], dtype: [fp32, bf16]}
  - kernel: test_sleep
    implementations: [cpu]
    grid: {id: {from: 1, to: 4, step: 1}}
)");
  const auto run = run_shell(mpirun_test_cli(4, fmt::format("run {} --output-dir {}", sweep.string(), dir.string())));
  ASSERT_EQ(run.exit_code, 0) << run.output;

  const ResultsFile file = ResultsFile::open_read_only(dir / "quantiles.h5");
  const auto rows = file.read_runs();
  ASSERT_EQ(rows.size(), 4u + 4u * 2);
  for (const StoredRun& r : rows) {
    ASSERT_EQ(r.status, "passed") << r.message;
    EXPECT_EQ(r.n_repeat, 12) << r.point_id;
    std::vector<double> samples = file.read_samples(r.samples_offset, r.samples_count);
    std::sort(samples.begin(), samples.end());
    const auto quantiles = file.read_quantiles(r.quantiles_offset, r.quantiles_count);
    ASSERT_EQ(quantiles.size(), 3u);
    const double levels[] = {0.5, 0.1, 0.9};
    for (std::size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(quantiles[i].quantile, levels[i]);
      EXPECT_DOUBLE_EQ(quantiles[i].value_ns, quantile_linear(samples, levels[i]));
    }
    EXPECT_DOUBLE_EQ(quantiles[0].value_ns, r.stats.median_ns);
  }

  std::size_t documents = 0;
  for (const auto& entry : fs::directory_iterator(dir / "kernelindex")) {
    const Json object = read_json(entry.path());
    std::set<std::string> latencies;
    for (const Json& m : object.at("run").at("spec").at("measurements"))
      if (m.at("metric") == "latency") latencies.insert(m.at("statistic").get<std::string>());
    EXPECT_EQ(latencies, (std::set<std::string>{"p10", "p90"})) << entry.path();
    const Json& measurement = object.at("protocol").at("spec").at("measurement");
    EXPECT_EQ(measurement.at("quantiles"), Json::array({0.5, 0.1, 0.9}));
    EXPECT_EQ(measurement.at("min_repeat"), 12);
    ++documents;
  }
  EXPECT_EQ(documents, rows.size());
}

// Seconds from one "2026-11-30T12:00:00.123Z" timestamp to another.
double seconds_between(const std::string& from, const std::string& to) {
  const auto seconds = [](const std::string& iso) {
    std::tm tm{};
    strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
    return static_cast<double>(timegm(&tm)) + std::stod(iso.substr(iso.find('.'), 4));
  };
  return seconds(to) - seconds(from);
}

// The cold protocol's noise record and the graph protocol's replays reach /runs and the documents
// from every rank; the protocol document holds each protocol's own parameters.
TEST(ColdAndGraphProtocols, AreStoredAndDocumentedFromEveryRank) {
  const fs::path dir = fresh_directory("cold_and_graph");
  const auto sweep_of = [&](const std::string& name, const std::string& protocol) {
    const fs::path sweep = dir / (name + ".yaml");
    write_file(sweep, fmt::format(R"(name: {}
protocol: {}
kernels:
  - kernel: gemm
    implementations: [cpu]
    grid: {{M: [16, 32], N: [8], K: [24], dtype: [fp32, bf16]}}
)",
                                  name, protocol));
    const auto run =
        run_shell(mpirun_test_cli(4, fmt::format("run {} --output-dir {}", sweep.string(), (dir / name).string())));
    EXPECT_EQ(run.exit_code, 0) << run.output;
    return ResultsFile::open_read_only(dir / name / (name + ".h5"));
  };

  // Points of a few microseconds on oversubscribed cores are noisy: each either meets the goal with
  // at least min_samples samples or runs until the timeout (a second).
  const ResultsFile cold =
      sweep_of("cold", "{name: cold, min_samples: 30, max_noise: 0.3, min_time_s: 0, timeout_s: 1}");
  for (const StoredRun& r : cold.read_runs()) {
    ASSERT_EQ(r.status, "passed") << r.message;
    ASSERT_GE(r.noise.goal_met, 0) << r.point_id;
    EXPECT_EQ(r.n_repeat, static_cast<std::int64_t>(r.samples_count));
    EXPECT_GE(r.noise.noise, 0);
    if (r.noise.goal_met == 1) {
      EXPECT_GE(r.samples_count, 30u);
      EXPECT_LE(r.noise.noise, 0.3);
    } else {
      EXPECT_GE(seconds_between(r.started_at, r.ended_at), 1.0) << r.point_id;
    }
    const std::vector<double> samples = cold.read_samples(r.samples_offset, r.samples_count);
    EXPECT_NEAR(r.noise.noise, summarize(samples).stddev_ns / summarize(samples).mean_ns, 1e-9);
    EXPECT_EQ(r.noise.samples_dropped, 0);
    EXPECT_TRUE(std::isnan(r.sample_sm_clock_min_mhz)) << "a CPU has no SM clock";
  }
  EXPECT_EQ(cold.read_runs().size(), 4u);

  const ResultsFile graph = sweep_of("graph", "{name: graph, rep_ms: 2, replays: 7}");
  for (const StoredRun& r : graph.read_runs()) {
    ASSERT_EQ(r.status, "passed") << r.message;
    EXPECT_EQ(r.samples_count, 7u);
    EXPECT_EQ(r.noise.goal_met, -1);
    EXPECT_TRUE(std::isnan(r.noise.noise));
  }

  std::set<std::string> protocols;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".json" || entry.path().parent_path().filename() != "kernelindex") continue;
    const Json object = read_json(entry.path());
    const Json& measurement = object.at("protocol").at("spec").at("measurement");
    const std::string name = measurement.at("name");
    protocols.insert(name);
    std::set<std::string> metrics;
    for (const Json& m : object.at("run").at("spec").at("measurements"))
      metrics.insert(m.at("metric").get<std::string>());
    const Json& native = object.at("run").at("spec").at("sourceNative").at("metrics");
    if (name == "cold") {
      EXPECT_EQ(measurement.at("min_samples"), 30);
      EXPECT_FALSE(measurement.contains("warmup_ms"));
      EXPECT_TRUE(metrics.count("noise")) << entry.path();
      EXPECT_GE(native.at("noise_goal_met").get<int>(), 0);
    } else {
      EXPECT_EQ(measurement.at("replays"), 7);
      EXPECT_FALSE(metrics.count("noise"));
      EXPECT_FALSE(native.contains("noise_goal_met"));
    }
  }
  EXPECT_EQ(protocols, (std::set<std::string>{"cold", "graph"}));
}

// `repetitions: 3` measures every point three times, round after round: one rank stores every
// measurement of round 0 before any of round 1; four ranks store each (point, repetition) once; a
// resume measures again only the measurements that did not pass, each in its own repetition; status
// counts measurements; show gives the median of each point's medians and their spread.
TEST(ProtocolRepetitions, MeasureEachPointInInterleavedRoundsAndResumePerRepetition) {
  const fs::path dir = fresh_directory("protocol_repetitions");
  const fs::path sweep = write_sweep(dir, R"(name: repeated
protocol: {warmup_ms: 0, rep_ms: 0, min_repeat: 3, repetitions: 3}
kernels:
  - kernel: gemm
    implementations: [cpu]
    grid: {M: [16, 32], N: [8], K: [24]}
  - kernel: test_crash
    grid: {action: [none, throw]}
)");
  const auto one_rank =
      run_shell(mpirun_test_cli(1, fmt::format("run {} --output-dir {}", sweep.string(), (dir / "one").string())));
  ASSERT_EQ(one_rank.exit_code, 1) << one_rank.output;  // the thrown points are errors
  const auto ordered = ResultsFile::open_read_only(dir / "one" / "repeated.h5").read_runs();
  ASSERT_EQ(ordered.size(), 4u * 3);
  for (std::size_t i = 0; i < ordered.size(); ++i)
    EXPECT_EQ(ordered[i].repetition, static_cast<std::int32_t>(i / 4)) << i;
  // A shape is checked in its first repetition only (`--check first`, the default).
  for (const StoredRun& r : ordered) {
    if (r.kernel != "gemm") continue;
    EXPECT_EQ(r.message.find("worst error") != std::string::npos, r.repetition == 0)
        << r.repetition << ": " << r.message;
  }
  // A document per measurement, however fast the repetitions came (the run names carry the repetition).
  std::set<std::int64_t> documented;
  std::size_t documents = 0;
  for (const auto& entry : fs::directory_iterator(dir / "one" / "kernelindex")) {
    ++documents;
    documented.insert(
        read_json(entry.path()).at("run").at("spec").at("sourceNative").at("repetition").get<std::int64_t>());
  }
  EXPECT_EQ(documents, ordered.size());
  EXPECT_EQ(documented, (std::set<std::int64_t>{0, 1, 2}));

  const std::string run = mpirun_test_cli(4, fmt::format("run {} --output-dir {}", sweep.string(), dir.string()));
  ASSERT_EQ(run_shell(run).exit_code, 1);
  const fs::path results = dir / "repeated.h5";
  const auto count_measurements = [&] {
    std::map<std::pair<std::string, std::int32_t>, int> seen;
    for (const StoredRun& r : ResultsFile::open_read_only(results).read_runs()) ++seen[{r.point_id, r.repetition}];
    return seen;
  };
  const auto first = count_measurements();
  ASSERT_EQ(first.size(), 4u * 3);
  for (const auto& [measurement, rows] : first) EXPECT_EQ(rows, 1) << measurement.first << " " << measurement.second;

  const auto resumed = run_shell(run + " --resume");
  EXPECT_EQ(resumed.exit_code, 1) << resumed.output;
  const auto again = count_measurements();
  ASSERT_EQ(again.size(), 4u * 3);
  std::size_t measured_again = 0;
  for (const auto& [measurement, rows] : again) measured_again += rows - 1;
  EXPECT_EQ(measured_again, 3u) << "the thrown point's three repetitions, and nothing that passed";

  const auto status = run_shell(fmt::format("{} status {}", KS_TEST_CLI, results.string()));
  EXPECT_NE(status.output.find("12 points planned"), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("missing: 0 points"), std::string::npos) << status.output;

  const auto show = run_shell(fmt::format(
      "{} show {} --where kernel=gemm --columns M,repetitions,median_of_medians_ms,repetition_spread --format json",
      KS_TEST_CLI, results.string()));
  ASSERT_EQ(show.exit_code, 0) << show.output;
  const Json rows = Json::parse(show.output);
  ASSERT_EQ(rows.size(), 2u);
  for (const Json& row : rows) {
    std::vector<double> medians;
    for (const StoredRun& r : ResultsFile::open_read_only(results).read_runs())
      if (r.kernel == "gemm" && Json::parse(r.params_json).at("M") == row.at("M"))
        medians.push_back(r.stats.median_ns / 1e6);
    std::sort(medians.begin(), medians.end());
    ASSERT_EQ(medians.size(), 3u);
    EXPECT_EQ(row.at("repetitions"), 3);
    EXPECT_DOUBLE_EQ(row.at("median_of_medians_ms").get<double>(), medians[1]);
    EXPECT_DOUBLE_EQ(row.at("repetition_spread").get<double>(), medians[2] / medians[0]);
  }

  const auto report =
      run_shell(fmt::format("{} report {} -o {}", KS_TEST_CLI, results.string(), (dir / "report").string()));
  ASSERT_EQ(report.exit_code, 0) << report.output;
  std::ifstream markdown(dir / "report" / "report.md");
  const std::string text((std::istreambuf_iterator<char>(markdown)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("| repetitions | median of medians (ms) | spread of medians |"), std::string::npos) << text;
}

std::size_t files_in(const fs::path& folder) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(folder), fs::directory_iterator()));
}

// A job resubmitted on a node without a GPU (a requeue, a sweep run again to be sure it is complete)
// leaves the points skipped for want of a GPU as they are; --retry-skipped records them again.
TEST(ResumeSkipped, ASkippedPointGetsNoNewRowWhileItsReasonHoldsUnlessAskedFor) {
  const fs::path dir = fresh_directory("resume_skipped");
  const fs::path sweep = write_sweep(dir, quick_sweep("mixed", kSleepAndCpuGemmKernels));
  const std::size_t points = planned_ids(sweep).size();
  constexpr std::size_t kGpuOnly = 6 * 2;
  const std::string run = mpirun_test_cli(2, fmt::format("run {} --output-dir {}", sweep.string(), dir.string()));
  ASSERT_EQ(run_shell(run).exit_code, 0);
  const auto rows = [&] { return ResultsFile::open_read_only(dir / "mixed.h5").read_runs().size(); };
  ASSERT_EQ(rows(), points);

  for (int again = 0; again < 2; ++again) {
    const auto resumed = run_shell(run + " --resume");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
    EXPECT_NE(
        resumed.output.find(fmt::format("resuming: {} points recorded skipped before are still skipped", kGpuOnly)),
        std::string::npos)
        << resumed.output;
    EXPECT_EQ(rows(), points) << resumed.output;
    EXPECT_EQ(files_in(dir / "kernelindex"), points);
  }

  const auto retried = run_shell(run + " --resume --retry-skipped");
  ASSERT_EQ(retried.exit_code, 0) << retried.output;
  EXPECT_EQ(rows(), points + kGpuOnly);
  EXPECT_EQ(files_in(dir / "kernelindex"), points + kGpuOnly);
  std::map<std::string, int> skipped_rows;
  for (const StoredRun& r : ResultsFile::open_read_only(dir / "mixed.h5").read_runs())
    if (r.status == "skipped") ++skipped_rows[r.point_id];
  EXPECT_EQ(skipped_rows.size(), kGpuOnly);
  for (const auto& [point, count] : skipped_rows) EXPECT_EQ(count, 2) << point;

  const auto refused = run_shell(
      mpirun_test_cli(1, fmt::format("run {} --output-dir {} --retry-skipped", sweep.string(), dir.string())));
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("--resume"), std::string::npos) << refused.output;
}

// Every rank parses the command line; the job's log gets the error once, from the first rank. Five
// jobs, since the failure this guards against is a race: when the other ranks left with the error
// code, mpirun could kill the first rank before its message was out (3 jobs of 15 on 2 cores).
TEST(ArgumentErrors, AreWrittenOnceForTheWholeJob) {
  const fs::path dir = fresh_directory("argument_errors");
  const fs::path sweep = write_sweep(dir, quick_sweep("mixed", kSleepAndCpuGemmKernels));
  for (int job = 0; job < 5; ++job) {
    const auto run = run_shell(mpirun_test_cli(3, fmt::format("run {} --no-such-option", sweep.string())));
    EXPECT_EQ(run.exit_code, 2) << run.output;
    std::size_t mentions = 0;
    for (auto at = run.output.find("--no-such-option"); at != std::string::npos;
         at = run.output.find("--no-such-option", at + 1))
      ++mentions;
    EXPECT_EQ(mentions, 1u) << "job " << job << ": " << run.output;
  }
}

// --where on plan and run: a subset of the sweep without editing the sweep file. The results file
// records the selection: status judges it against the selected points, and --resume keeps to them.
TEST(Where, PlanAndRunKeepOnlyTheSelectedPointsAndTheFileRemembersThem) {
  const fs::path dir = fresh_directory("where");
  const fs::path sweep = write_sweep(dir, quick_sweep("mixed", kSleepAndCpuGemmKernels));
  const std::string where = "kernel=gemm and M>=20";
  const auto plan = run_shell(fmt::format("{} plan {} --json --where '{}'", KS_TEST_CLI, sweep.string(), where));
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  std::set<std::string> selected;
  for (const Json& p : Json::parse(plan.output)) {
    EXPECT_EQ(p.at("kernel"), "gemm");
    EXPECT_EQ(p.at("params").at("M"), 33);
    selected.insert(p.at("id").get<std::string>());
  }
  EXPECT_EQ(selected.size(), 2u);  // fp32 and bf16

  const std::string run =
      mpirun_test_cli(2, fmt::format("run {} --output-dir {} --where '{}'", sweep.string(), dir.string(), where));
  const auto measured = run_shell(run);
  ASSERT_EQ(measured.exit_code, 0) << measured.output;
  std::set<std::string> stored;
  for (const StoredRun& r : ResultsFile::open_read_only(dir / "mixed.h5").read_runs()) stored.insert(r.point_id);
  EXPECT_EQ(stored, selected);
  const auto status = run_shell(fmt::format("{} status {}", KS_TEST_CLI, (dir / "mixed.h5").string()));
  EXPECT_NE(status.output.find(fmt::format("2 points planned where '{}'", where)), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("missing: 0 points"), std::string::npos) << status.output;

  const auto other = run_shell(mpirun_test_cli(
      1, fmt::format("run {} --output-dir {} --resume --where kernel=test_sleep", sweep.string(), dir.string())));
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find(fmt::format("holds the points of --where '{}'", where)), std::string::npos)
      << other.output;

  const auto by_status = run_shell(fmt::format("{} plan {} --where status=failed", KS_TEST_CLI, sweep.string()));
  EXPECT_EQ(by_status.exit_code, 2) << by_status.output;
  EXPECT_NE(by_status.output.find("--where: status is what a measured point has"), std::string::npos)
      << by_status.output;
  const auto unreadable = run_shell(fmt::format("{} plan {} --where 'M'", KS_TEST_CLI, sweep.string()));
  EXPECT_EQ(unreadable.exit_code, 2) << unreadable.output;
  EXPECT_NE(unreadable.output.find("'M' is not KEY OP VALUE"), std::string::npos) << unreadable.output;
}

TEST(RunFailures, CrashHangErrorAndFailedCheckCostOnlyTheirPoint) {
  const fs::path dir = fresh_directory("run_failures");
  const fs::path sweep = write_sweep(dir, quick_sweep("failures", R"(  - kernel: test_crash
    timeout_s: 3
    grid:
      action: [none, sigkill, abort, hang, throw, fail_check]
  - kernel: test_sleep
    implementations: [cpu]
    grid:
      id: {from: 1, to: 4, step: 1}
)"));
  const auto run = run_shell(mpirun_test_cli(2, fmt::format("run {} --output-dir {}", sweep.string(), dir.string())));
  EXPECT_EQ(run.exit_code, 1) << run.output;  // some points did not pass

  std::map<std::string, std::string> status_by_action;
  std::size_t sleepers_passed = 0;
  for (const RunRecord& r : ResultsFile::open_read_only(dir / "failures.h5").read_runs()) {
    const Json params = Json::parse(r.params_json);
    if (r.kernel == "test_crash") status_by_action[params.at("action")] = r.status + ": " + r.message;
    else if (r.status == "passed") ++sleepers_passed;
    // The log names each point that did not pass as it happens, with its status and message.
    if (r.status != "passed") {
      EXPECT_NE(run.output.find(fmt::format("{}: test_crash/{}/{} action={} id=0 on rank {} (", r.status,
                                            r.implementation, r.mode, params.at("action").get<std::string>(), r.rank)),
                std::string::npos)
          << run.output;
    }
  }
  // The start block says what runs where.
  EXPECT_NE(run.output.find("  plan: 14 points, 14 to measure\n"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("  ranks: 2 on 1 node(s)\n"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find(fmt::format("  output: {}", (dir / "failures.h5").string())), std::string::npos)
      << run.output;
  EXPECT_EQ(sleepers_passed, 4u * 2);
  EXPECT_EQ(status_by_action["none"].rfind("passed", 0), 0u) << status_by_action["none"];
  EXPECT_EQ(status_by_action["sigkill"].rfind("crashed", 0), 0u) << status_by_action["sigkill"];
  EXPECT_NE(status_by_action["sigkill"].find("SIGKILL"), std::string::npos) << status_by_action["sigkill"];
  EXPECT_EQ(status_by_action["abort"].rfind("crashed", 0), 0u) << status_by_action["abort"];
  EXPECT_EQ(status_by_action["hang"].rfind("timeout", 0), 0u) << status_by_action["hang"];
  EXPECT_EQ(status_by_action["throw"].rfind("error", 0), 0u) << status_by_action["throw"];
  EXPECT_NE(status_by_action["throw"].find("thrown on purpose"), std::string::npos);
  EXPECT_EQ(status_by_action["fail_check"].rfind("failed", 0), 0u) << status_by_action["fail_check"];
}

// Whether a process runs with `text` in its command line.
bool process_mentions(const std::string& text) {
  for (pid_t pid : ks::process_ids())
    if (ks::read_process_file(pid, "cmdline").value_or("").find(text) != std::string::npos) return true;
  return false;
}

TEST(RunResume, KilledJobCompletesWithNoPointMeasuredTwice) {
  const fs::path dir = fresh_directory("run_resume");
  // 24 points of ~0.4 s each on two ranks (about 5 s): the file is written every 2 s, so the job is
  // killed with part of the plan stored.
  const fs::path sweep = write_sweep(dir, quick_sweep("resume", R"(  - kernel: test_sleep
    implementations: [cpu]
    modes: [forward]
    fixed: {setup_ms: 400}
    grid:
      id: {from: 1, to: 24, step: 1}
)"));
  const fs::path results = dir / "resume.h5";
  const std::string command = mpirun_test_cli(2, fmt::format("run {} --output-dir {}", sweep.string(), dir.string()));
  const pid_t job = ::fork();
  ASSERT_GE(job, 0);
  if (job == 0) {
    ::setpgid(0, 0);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    ::execl("/bin/sh", "sh", "-c", (command + " >/dev/null 2>&1").c_str(), nullptr);
    ::_exit(127);
  }
  // Wait until some points are stored (the file is flushed every 2 s), then kill the whole job.
  const std::uint64_t stored = wait_for_rows(results, 4, 60);
  ::kill(-job, SIGKILL);  // mpirun; each worker dies with its rank (PR_SET_PDEATHSIG)
  ::waitpid(job, nullptr, 0);
  // The ranks have process groups of their own and end a moment after mpirun: the file is read as
  // they leave it, not while rank 0 may still be inside a write.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (process_mentions(sweep.string()) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_FALSE(process_mentions(sweep.string())) << "a rank of the killed job is still running";
  ASSERT_GE(stored, 4u) << "the job stored nothing before it was killed";
  const std::uint64_t before = ResultsFile::open_read_only(results).run_count();
  ASSERT_LT(before, 24u) << "the job finished before it could be killed; make its points longer";

  const auto again = run_shell(command);
  EXPECT_EQ(again.exit_code, 2) << "an existing results file must not be replaced silently\n" << again.output;
  EXPECT_NE(again.output.find("--resume"), std::string::npos) << again.output;

  const auto resumed = run_shell(command + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const ResultsFile file = ResultsFile::open_read_only(results);
  std::map<std::string, int> seen;
  for (const RunRecord& r : file.read_runs()) {
    EXPECT_EQ(r.status, "passed");
    ++seen[r.point_id];
  }
  EXPECT_EQ(seen.size(), 24u);
  for (const auto& [id, count] : seen) EXPECT_EQ(count, 1) << id << " measured twice";
  EXPECT_EQ(file.read_sessions().size(), 2u);

  const auto status = run_shell(fmt::format("{} status {}", KS_TEST_CLI, results.string()));
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("missing: 0 points"), std::string::npos) << status.output;
}

TEST(RunResume, RefusesASweepFileThatChanged) {
  const fs::path dir = fresh_directory("run_resume_changed");
  const std::string kernels = "  - kernel: noop\n    grid:\n      id: [1, 2]\n";
  const fs::path sweep = write_sweep(dir, quick_sweep("changed", kernels));
  const std::string run = mpirun_test_cli(1, fmt::format("run {} --output-dir {}", sweep.string(), dir.string()));
  ASSERT_EQ(run_shell(run).exit_code, 0);
  write_file(sweep, quick_sweep("changed", "  - kernel: noop\n    grid:\n      id: [1, 2, 3]\n"));
  const auto refused = run_shell(run + " --resume");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("differs"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("id: [1, 2, 3]"), std::string::npos) << refused.output;
}

// A stop between a batch's rows and its documents (rank 0 killed in between) leaves the rows in the
// file, the first documents written, the last one cut short (jsonl), and the batch in the journal.
// That state is made here from a finished run of 6 points (one batch): --resume writes the 4 missing
// documents, each once and as it would have been, and drops the journal.
class RunResumeDocuments : public ::testing::TestWithParam<std::string> {};

TEST_P(RunResumeDocuments, WritesTheDocumentsAStopLeftPending) {
  const std::string format = GetParam();
  const fs::path dir = fresh_directory("run_resume_documents_" + format);
  const fs::path sweep =
      write_sweep(dir, quick_sweep("pending", "  - kernel: noop\n    grid:\n      id: {from: 1, to: 6, step: 1}\n"));
  const std::string run = mpirun_test_cli(
      1, fmt::format("run {} --output-dir {} --kernelindex-format {}", sweep.string(), dir.string(), format));
  ASSERT_EQ(run_shell(run).exit_code, 0);
  const fs::path documents = dir / "kernelindex";
  const fs::path journal = documents / PendingDocuments::kFileName;
  ASSERT_FALSE(fs::exists(journal)) << "a finished run leaves no pending documents";

  // The batch's documents in row order, as whole files (json) or lines (jsonl).
  std::map<std::string, std::string> text_of_point;
  std::map<std::string, fs::path> file_of_point;
  if (format == "json") {
    for (const auto& entry : fs::directory_iterator(documents)) {
      const std::string point = read_json(entry.path())["run"]["spec"]["sourceNative"]["pointId"];
      text_of_point[point] = read_text(entry.path());
      file_of_point[point] = entry.path();
    }
  } else {
    for_each_document(documents, {}, [&](std::string_view line) {
      text_of_point[Json::parse(line)["run"]["spec"]["sourceNative"]["pointId"]] = std::string(line);
    });
  }
  std::vector<std::string> rows;
  for (const RunRecord& r : ResultsFile::open_read_only(dir / "pending.h5").read_runs()) rows.push_back(r.point_id);
  ASSERT_EQ(rows.size(), 6u);
  ASSERT_EQ(text_of_point.size(), 6u);

  std::string held = R"({"count":6,"rows_before":0})"
                     "\n";
  for (const std::string& point : rows) held += Json::parse(text_of_point[point]).dump() + "\n";
  write_file(journal, held);
  if (format == "json") {
    for (std::size_t i = 2; i < rows.size(); ++i) fs::remove(file_of_point[rows[i]]);
  } else {
    // The stop came while the index took the entries of a second block: its shard has the block,
    // its index the entries of the first block and half a line.
    remove_document_store(documents);
    {
      DocumentWriter writer(documents, "jsonl");
      for (std::size_t i = 0; i < rows.size(); ++i) {
        writer.write_line(text_of_point[rows[i]]);
        if (i == 1) writer.flush();
      }
      writer.flush();
    }
    const std::vector<std::string> index = lines_of(read_text(documents / kDocumentIndexFileName));
    ASSERT_EQ(index.size(), 7u) << "a comment and six entries";
    write_file(documents / kDocumentIndexFileName,
               index[0] + "\n" + index[1] + "\n" + index[2] + "\n" + index[3].substr(0, 20));
  }

  const auto resumed = run_shell(run + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("wrote the 4 documents"), std::string::npos) << resumed.output;
  EXPECT_FALSE(fs::exists(journal));
  if (format == "json") {
    std::size_t files = 0;
    for (const auto& entry : fs::directory_iterator(documents)) {
      ++files;
      const std::string point = read_json(entry.path())["run"]["spec"]["sourceNative"]["pointId"];
      EXPECT_EQ(read_text(entry.path()), text_of_point[point]) << entry.path();
    }
    EXPECT_EQ(files, 6u);
  } else {
    std::string expected;
    for (const std::string& point : rows) expected += text_of_point[point] + "\n";
    EXPECT_EQ(read_text(documents / "kernelindex-0000.jsonl"), expected)
        << "the shard holds each document once, in order";
    std::string indexed;
    for_each_document(documents, {}, [&](std::string_view line) { indexed += std::string(line) + "\n"; });
    EXPECT_EQ(indexed, expected);
  }

  // A journal whose rows never reached the file (the stop came before they were stored) writes
  // nothing: those points have no row, and a resume measures them again.
  write_file(journal,
             std::string(R"({"count":1,"rows_before":6})") + "\n" + Json::parse(text_of_point[rows[0]]).dump() + "\n");
  const auto again = run_shell(run + " --resume");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(again.output.find("wrote the"), std::string::npos) << again.output;
  EXPECT_FALSE(fs::exists(journal));
  if (format == "json") EXPECT_EQ(std::distance(fs::directory_iterator(documents), fs::directory_iterator()), 6);
  else EXPECT_EQ(lines_of(read_text(documents / kDocumentIndexFileName)).size(), 7u);
}

INSTANTIATE_TEST_SUITE_P(Formats, RunResumeDocuments, ::testing::Values("json", "jsonl"));

// --overwrite replaces a results file, and refuses any other file that has its name (here the sweep
// file itself), leaving it as it was.
TEST(RunOverwrite, ReplacesOnlyAResultsFile) {
  const fs::path dir = fresh_directory("run_overwrite");
  const fs::path sweep = write_sweep(dir, quick_sweep("overwrite", "  - kernel: noop\n    grid:\n      id: [1, 2]\n"));
  const std::string run = mpirun_test_cli(1, fmt::format("run {} --output-dir {}", sweep.string(), dir.string()));
  ASSERT_EQ(run_shell(run).exit_code, 0);
  // Files of the user's own beside the documents stay; the replaced run's documents go.
  write_file(dir / "kernelindex" / "notes.txt", "mine\n");
  write_file(dir / "kernelindex" / "mine.json", "{\"run\": \"not a kernelindex run\"}\n");
  std::set<fs::path> documents_before;
  for (const auto& entry : fs::directory_iterator(dir / "kernelindex"))
    if (entry.path().filename().string().starts_with("kernelsweep-")) documents_before.insert(entry.path());
  ASSERT_EQ(documents_before.size(), 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // document names carry the second they were made
  const auto replaced = run_shell(run + " --overwrite");
  EXPECT_EQ(replaced.exit_code, 0) << replaced.output;
  EXPECT_EQ(ResultsFile::open_read_only(dir / "overwrite.h5").run_count(), 2u);
  for (const fs::path& old_document : documents_before) EXPECT_FALSE(fs::exists(old_document)) << old_document;
  EXPECT_EQ(read_text(dir / "kernelindex" / "notes.txt"), "mine\n");
  EXPECT_TRUE(fs::exists(dir / "kernelindex" / "mine.json"));

  const std::string sweep_before = read_text(sweep);
  const auto refused = run_shell(run + fmt::format(" --results-file {} --overwrite", sweep.string()));
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("is not a results file that can be read"), std::string::npos) << refused.output;
  EXPECT_EQ(read_text(sweep), sweep_before) << "the sweep file is left as it was";
}

// Points whose setup takes 400 ms and points of 10 ms, alternating: dealt round robin to two ranks,
// every long point lands on one rank; taken from the dynamic queue, both ranks run long ones.
std::map<int, int> long_points_per_rank(const std::string& schedule) {
  const fs::path dir = fresh_directory("balance_" + schedule);
  const fs::path sweep = write_sweep(dir, quick_sweep("balance", R"(  - kernel: test_sleep
    implementations: [cpu]
    modes: [forward]
    zip: [[id, setup_ms]]
    grid:
      id: [1, 2, 3, 4, 5, 6, 7, 8]
      setup_ms: [400, 10, 400, 10, 400, 10, 400, 10]
)"));
  const auto run = run_shell(
      mpirun_test_cli(2, fmt::format("run {} --output-dir {} --schedule {}", sweep.string(), dir.string(), schedule)));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  std::map<int, int> long_points;
  for (const RunRecord& r : ResultsFile::open_read_only(dir / "balance.h5").read_runs())
    if (Json::parse(r.params_json).at("setup_ms").get<double>() > 100) ++long_points[r.rank];
  return long_points;
}

TEST(RunSchedule, DynamicQueueSpreadsLongPointsWhereStaticDoesNot) {
  const auto fixed = long_points_per_rank("static");
  EXPECT_EQ(fixed.size(), 1u) << "round robin deals every long point to one rank";
  const auto dynamic = long_points_per_rank("dynamic");
  EXPECT_EQ(dynamic.size(), 2u) << "the free rank should take long points too";
}

}  // namespace
}  // namespace ks::testing
