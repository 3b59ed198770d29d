// `kernelsweep history` on results files written here through the store (every median known in
// advance), the order of the runs, and the labels that name them (store/run_labels.h). The steps
// of one series: step_detection_test.cpp; real sweeps: tests/mpi/history_test.cpp; Liger's CSVs:
// history_import_test.cpp.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/canonical_json.h"
#include "common/digest.h"
#include "history/history.h"
#include "store/results_file.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// --- labels ---------------------------------------------------------------------------------------

TEST(RunLabels, AreReadFromKeyEqualsValueAndRefusedInOneLine) {
  EXPECT_EQ(parse_labels({"commit=3f2a1c9", "branch=main", "driver=580.65.06"}),
            (RunLabels{{"branch", "main"}, {"commit", "3f2a1c9"}, {"driver", "580.65.06"}}));
  EXPECT_EQ(parse_labels({"note=a=b"}), (RunLabels{{"note", "a=b"}}));  // the first '=' splits
  const auto refusal = [](const std::vector<std::string>& labels) {
    try {
      parse_labels(labels);
    } catch (const LabelError& error) { return std::string(error.what()); }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal({"commit"}), "--label 'commit' is not KEY=VALUE");
  EXPECT_EQ(refusal({"commit="}), "--label 'commit=' has an empty value");
  EXPECT_EQ(refusal({"-x=1"}),
            "--label '-x=1': the key must be letters, digits, '_', '.' and '-', not starting with '.' or '-'");
  EXPECT_EQ(refusal({"a=1", "a=2"}), "--label a is given twice");
  EXPECT_EQ(refusal({"kernelsweep_commit=x"}),
            "--label 'kernelsweep_commit=x': kernelsweep_commit is a label kernelsweep writes itself");
  EXPECT_EQ(labels_text({{"commit", "c1"}, {"branch", "main"}}), "branch=main commit=c1");
  EXPECT_EQ(shared_labels({{{"a", "1"}, {"b", "2"}}, {{"a", "1"}, {"b", "3"}}}), (RunLabels{{"a", "1"}}));
}

TEST(RunLabels, AreKeptInTheResultsFileAndOnlyWhereThereAreSome) {
  const fs::path dir = fresh_directory("run_labels");
  RunInfo info;
  info.sweep_name = "labelled";
  info.started_at = "2026-12-01T00:00:00.000Z";
  info.labels = {{"commit", "3f2a1c9"}, {"branch", "main"}};
  ResultsFile::create(dir / "labelled.h5", info).finish("2026-12-01T00:01:00.000Z");
  EXPECT_EQ(ResultsFile::open_read_only(dir / "labelled.h5").read_info().labels, info.labels);
  info.labels.clear();
  ResultsFile::create(dir / "plain.h5", info).finish("2026-12-01T00:01:00.000Z");
  EXPECT_TRUE(ResultsFile::open_read_only(dir / "plain.h5").read_info().labels.empty());
  const CommandResult dump = run_shell(fmt::format("h5dump -a /labels {}", (dir / "labelled.h5").string()));
  EXPECT_NE(dump.output.find(R"((0): "{"branch":"main","commit":"3f2a1c9"}")"), std::string::npos) << dump.output;
}

// --- files made here ------------------------------------------------------------------------------

struct NightPoint {
  int id = 0;
  double median_ms = 1;
  std::string device = "NVIDIA H200";
  std::string status = "passed";
};

std::string params_of(int id) { return canonical_json(Json{{"id", id}, {"run_ms", 1.0}, {"setup_ms", 0.0}}); }

void write_night(const fs::path& path, const std::string& started_at, const RunLabels& labels,
                 const std::vector<NightPoint>& points) {
  const RunInfo info{
      .sweep_name = "nightly", .sweep_text = "name: nightly\n", .started_at = started_at, .labels = labels};
  fs::create_directories(path.parent_path());
  ResultsFile file = ResultsFile::create(path, info);
  file.put_protocol("sha256:protocol", R"({"spec":{"name":"do_bench"}})");
  std::vector<StoredRun> rows;
  for (const NightPoint& point : points) {
    const std::string environment = "sha256:" + point.device;
    file.put_environment(environment, R"({"spec":{"hardware":{"product":")" + point.device + R"("}}})");
    RunRecord r;
    r.kernel = "test_sleep";
    r.implementation = "cpu";
    r.mode = "forward";
    r.params_json = params_of(point.id);
    r.point_id = sha256_hex("test_sleep/cpu/forward/" + r.params_json);
    r.status = point.status;
    r.started_at = r.ended_at = started_at;
    if (point.status == "passed") {
      r.n_repeat = 10;
      r.stats.median_ns = point.median_ms * 1e6;
    }
    rows.emplace_back(std::move(r), Citations{"sha256:protocol", environment, "sha256:w", "sha256:i"});
  }
  file.append(rows);
  file.finish(started_at);
}

// A run-to-run wobble of a few tenths of a percent, night by night.
constexpr double kWobble[] = {0, 1, -1, 0.5, -0.5, 1, -1, 0};

// Eight nights of six points on an H200 and one on an A100 (nightly/n0.h5 ... n7.h5, started a day
// apart, labelled commit=cN night=N):
//   1 1 ms, 25% slower from night 5          4 0.8 ms, but night 7 alone 40% slower (pending)
//   2 2 ms throughout                         5 crashed on night 2, 1.5 ms otherwise
//   3 0.5 ms, 20% faster from night 4         1 on the A100: 3 ms throughout
class HistoryCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    directory_ = new fs::path(fresh_directory("history_command"));
    for (int night = 0; night < 8; ++night) {
      const double wobble = 1 + 0.005 * kWobble[night];
      write_night(*directory_ / "nightly" / fmt::format("n{}.h5", night),
                  fmt::format("2026-12-0{}T02:00:00.000Z", night + 1),
                  {{"commit", fmt::format("c{}", night)}, {"night", std::to_string(night)}},
                  {{1, (night >= 5 ? 1.25 : 1.0) * wobble},
                   {2, 2.0 * wobble},
                   {3, (night >= 4 ? 0.4 : 0.5) * wobble},
                   {4, (night == 7 ? 1.12 : 0.8) * wobble},
                   {5, 1.5 * wobble, "NVIDIA H200", night == 2 ? "crashed" : "passed"},
                   {1, 3.0 * wobble, "NVIDIA A100"}});
    }
  }
  static void TearDownTestSuite() { delete directory_; }
  static CommandOutput history(const std::string& args) {
    return run_command(fmt::format("cd {} && {} history {}", directory_->string(), KS_CLI, args));
  }
  static Json history_json(const std::string& args) {
    const CommandOutput run = history(args + " --format json");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return Json::parse(run.out);
  }
  static fs::path* directory_;
};
fs::path* HistoryCommand::directory_ = nullptr;

// The series of `json`, by "id@device".
std::map<std::string, Json> series_by_point(const Json& json) {
  std::map<std::string, Json> out;
  for (const Json& series : json.at("series"))
    out[fmt::format("{}@{}", series.at("parameters").at("id").get<int>(), series.at("device").get<std::string>())] =
        series;
  return out;
}

TEST_F(HistoryCommand, JsonListsEverySeriesWithItsSteps) {
  const Json out = history_json("nightly");
  ASSERT_EQ(out.at("runs").size(), 8u);
  EXPECT_EQ(out.at("runs")[5].at("file"), "nightly/n5.h5");
  EXPECT_EQ(out.at("runs")[5].at("labels"), (Json{{"commit", "c5"}, {"night", "5"}}));
  EXPECT_EQ(out.at("order"), "given");
  auto series = series_by_point(out);
  ASSERT_EQ(series.size(), 6u);
  const Json& slower = series.at("1@NVIDIA H200");
  EXPECT_EQ(slower.at("kernel"), "test_sleep");
  EXPECT_EQ(slower.at("implementation"), "cpu");
  EXPECT_EQ(slower.at("mode"), "forward");
  EXPECT_EQ(slower.at("state"), "slower");
  EXPECT_EQ(slower.at("runs_seen"), 8);
  ASSERT_EQ(slower.at("steps").size(), 1u);
  const Json& step = slower.at("steps")[0];
  EXPECT_EQ(step.at("run"), 5);
  EXPECT_EQ(step.at("labels"), (Json{{"commit", "c5"}, {"night", "5"}}));
  EXPECT_DOUBLE_EQ(step.at("before_ms").get<double>(), 1.0);  // the median of nights 0 to 4
  EXPECT_DOUBLE_EQ(step.at("after_ms").get<double>(), 1.25);  // of nights 5 to 7
  EXPECT_NEAR(step.at("change_pct").get<double>(), 25.0, 1e-9);
  EXPECT_EQ(step.at("direction"), "slowdown");

  const Json& faster = series.at("3@NVIDIA H200");
  EXPECT_EQ(faster.at("state"), "faster");
  ASSERT_EQ(faster.at("steps").size(), 1u);
  EXPECT_EQ(faster.at("steps")[0].at("run"), 4);
  EXPECT_NEAR(faster.at("steps")[0].at("change_pct").get<double>(), -20.0, 0.5);

  const Json& pending = series.at("4@NVIDIA H200");
  EXPECT_EQ(pending.at("state"), "steady");
  EXPECT_TRUE(pending.at("steps").empty());
  ASSERT_FALSE(pending.at("pending").is_null());
  EXPECT_EQ(pending.at("pending").at("run"), 7);
  EXPECT_NEAR(pending.at("pending").at("change_pct").get<double>(), 40.0, 0.5);

  const Json& gap = series.at("5@NVIDIA H200");
  EXPECT_EQ(gap.at("runs_seen"), 7);  // crashed on night 2
  EXPECT_TRUE(gap.at("steps").empty());
  for (const char* steady : {"2@NVIDIA H200", "1@NVIDIA A100"}) {
    EXPECT_EQ(series.at(steady).at("state"), "steady") << steady;
    EXPECT_TRUE(series.at(steady).at("steps").empty()) << steady;
    EXPECT_TRUE(series.at(steady).at("pending").is_null()) << steady;
  }
  EXPECT_EQ(out.at("summary"), (Json{{"points", 6}, {"slower", 1}, {"faster", 1}, {"steady", 4}, {"pending", 1}}));
}

TEST_F(HistoryCommand, TheTableNamesEachStepWithItsRunAndLabels) {
  const CommandOutput run = history("nightly");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (const char* line :
       {"history: 8 runs in given order, from run 0 nightly/n0.h5 (commit=c0 night=0) to run 7 nightly/n7.h5 "
        "(commit=c7 night=7)",
        "test_sleep  cpu             forward  NVIDIA H200  id=1 run_ms=1 setup_ms=0     8         1       1.25   "
        "0.6%  slowdown   5  commit=c5 night=5          1      1.25  +25.0%",
        "test_sleep  cpu             forward  NVIDIA H200  id=4 run_ms=1 setup_ms=0     8       0.8       1.12   "
        "0.8%  pending    7  commit=c7 night=7        0.8      1.12  +40.0%",
        "6 points over 8 runs: 1 slower since a step, 1 faster since a step, 4 without a step; 1 with the latest "
        "run alone off its level (pending)"})
    EXPECT_NE(run.out.find(line), std::string::npos) << line << "\nin\n" << run.out;
  // Slower first, then the pending slowdown, the faster point, and the steady ones.
  std::vector<std::string> order;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("test_sleep")) order.push_back(line.substr(line.find("id="), 4));
  EXPECT_EQ(order, (std::vector<std::string>{"id=1", "id=4", "id=3", "id=1", "id=2", "id=5"})) << run.out;
}

TEST_F(HistoryCommand, MarkdownAndCsvCarryTheSameRows) {
  const CommandOutput md = history("nightly --format md");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("| kernel | implementation | mode | device | params | runs | first ms | latest ms | noise | "
                        "step | at | run | before ms | after ms | change |"),
            std::string::npos)
      << md.out;
  EXPECT_NE(md.out.find("| slowdown | 5 | commit=c5 night=5 | 1 | 1.25 | +25.0% |"), std::string::npos) << md.out;
  const CommandOutput csv = history("nightly --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_TRUE(
      csv.out.starts_with("kernel,implementation,mode,device,params,runs,first ms,latest ms,noise,step,at,"
                          "run,before ms,after ms,change,point_id\r\n"))
      << csv.out;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 7);  // the header and a row for each of six points
}

TEST_F(HistoryCommand, FailOnStepFailsWhereTheLatestLevelIsSlower) {
  const CommandOutput gated = history("nightly --fail-on-step");
  EXPECT_EQ(gated.exit_code, 1) << gated.err;
  EXPECT_EQ(gated.err,
            "kernelsweep history: 1 point is slower since a step of more than 5% (--fail-on-step): test_sleep cpu "
            "forward id=1 run_ms=1 setup_ms=0 (+25.0% since run 5)\n");
  EXPECT_FALSE(gated.out.empty());  // the whole output comes first
  // A step of 25% is no step at --min-change 30; the pending run alone never fails the gate.
  EXPECT_EQ(history("nightly --fail-on-step --min-change 30").exit_code, 0);
  EXPECT_EQ(history("nightly --fail-on-step --where 'id=2|3|4'").exit_code, 0);
  // Up to night 5, point 1 has one night on its slower level: pending, not yet a step.
  std::string first_six;
  for (int night = 0; night < 6; ++night) first_six += fmt::format(" nightly/n{}.h5", night);
  const Json out = history_json(first_six);
  EXPECT_EQ(series_by_point(out).at("1@NVIDIA H200").at("pending").at("run"), 5);
  EXPECT_EQ(history(first_six + " --fail-on-step").exit_code, 0);
}

TEST_F(HistoryCommand, RunsAreOrderedAsAskedAndFoldersByTime) {
  // Given: the arguments' order, whatever the files' times.
  const Json given = history_json("nightly/n7.h5 nightly/n0.h5");
  EXPECT_EQ(given.at("runs")[0].at("file"), "nightly/n7.h5");
  const Json by_time = history_json("nightly/n7.h5 nightly/n0.h5 --order time");
  EXPECT_EQ(by_time.at("runs")[0].at("file"), "nightly/n0.h5");
  EXPECT_EQ(by_time.at("runs")[0].at("time"), "2026-12-01T02:00:00.000Z");
  // By a label's value, numbers by value: night 10 after night 9.
  const fs::path more = *directory_ / "more";
  write_night(more / "a.h5", "2026-12-20T00:00:00.000Z", {{"night", "10"}}, {{2, 2.0}});
  write_night(more / "b.h5", "2026-12-21T00:00:00.000Z", {{"night", "9"}}, {{2, 2.0}});
  const Json by_label = history_json("more --order label:night");
  EXPECT_EQ(by_label.at("runs")[0].at("file"), "more/b.h5");
  EXPECT_EQ(by_label.at("runs")[1].at("file"), "more/a.h5");
  // A folder's files at any depth, by time.
  const Json nested = history_json(".");
  EXPECT_EQ(nested.at("runs").size(), 10u);
  EXPECT_EQ(nested.at("runs")[9].at("file"), "./more/b.h5");
}

TEST_F(HistoryCommand, WhereKeepsSeriesByTheirKeysAndDevice) {
  const Json a100 = history_json("nightly --where device='NVIDIA A100'");
  ASSERT_EQ(a100.at("series").size(), 1u);
  EXPECT_EQ(a100.at("series")[0].at("device"), "NVIDIA A100");
  const Json some = history_json("nightly --where 'id>=4,kernel=test_sleep'");
  EXPECT_EQ(some.at("series").size(), 2u);
}

TEST_F(HistoryCommand, BadInputIsOneLineAndExitTwo) {
  const auto refusal = [](const std::string& args) {
    const CommandOutput run = history(args);
    EXPECT_EQ(run.exit_code, 2) << args << ": " << run.err;
    EXPECT_TRUE(run.out.empty()) << args;
    return run.err;
  };
  EXPECT_EQ(refusal("none.h5"), "kernelsweep history: none.h5: no such file or folder\n");
  fs::create_directories(*directory_ / "empty");
  EXPECT_EQ(refusal("empty"), "kernelsweep history: empty: a folder without results files (*.h5)\n");
  EXPECT_EQ(refusal("nightly --order size"),
            "kernelsweep history: --order 'size': expected given, time or label:KEY\n");
  EXPECT_EQ(refusal("nightly --order label:branch"),
            "kernelsweep history: nightly/n0.h5: no label branch (--order label:branch); its labels: commit=c0 "
            "night=0\n");
  EXPECT_EQ(refusal("nightly --where kernel"),
            "kernelsweep history: --where: 'kernel' is not KEY OP VALUE (OP one of = != < <= > >=)\n");
  EXPECT_EQ(refusal("nightly --min-change -1"),
            "kernelsweep history: --min-change must be a percentage of 0 or more, got -1\n");
  fs::create_directories(*directory_ / "text");
  write_file(*directory_ / "text" / "not.h5", "not a results file\n");
  const std::string damaged = refusal("text");
  EXPECT_TRUE(damaged.starts_with("kernelsweep history: results file text/not.h5 ")) << damaged;
  EXPECT_EQ(std::count(damaged.begin(), damaged.end(), '\n'), 1) << damaged;
}

TEST_F(HistoryCommand, ReadsEachFileForItsMediansOnly) {
  // The library under the command, as another command calls it.
  const history::History read = history::read_history({(*directory_ / "nightly").string()}, {}, RowFilter());
  ASSERT_EQ(read.runs.size(), 8u);
  EXPECT_EQ(read.runs[3].labels, (RunLabels{{"commit", "c3"}, {"night", "3"}}));
  ASSERT_EQ(read.series.size(), 6u);
  for (const history::PointSeries& series : read.series) EXPECT_EQ(series.medians_ns.size(), 8u);
  EXPECT_TRUE(std::isnan(read.series[4].medians_ns[2]));  // point 5 crashed on night 2
  EXPECT_DOUBLE_EQ(read.series[1].medians_ns[0], 2e6);
}

// --- report --history -------------------------------------------------------------------------------

// The file a point's timeline is drawn into (plots/timeline-KERNEL-ID12-DEVICE.svg).
fs::path timeline_of(const fs::path& report, int id) {
  const std::string point_id = sha256_hex("test_sleep/cpu/forward/" + params_of(id));
  return report / "plots" / fmt::format("timeline-test_sleep-{}-NVIDIA-H200.svg", point_id.substr(0, 12));
}

TEST_F(HistoryCommand, ReportListsTheStepsSlowestFirstAndDrawsTheirTimelines) {
  const CommandOutput run =
      run_command(fmt::format("cd {} && {} report nightly -o steps-report --history", directory_->string(), KS_CLI));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("(6 points over 8 runs, 3 timelines)"), std::string::npos) << run.out;
  const fs::path report = *directory_ / "steps-report";
  const std::string md = read_text(report / "report.md");
  // The first row of the steps table is the planted slowdown, at night 5 and its labels; the
  // speed-up after it, the pending latest run last.
  const std::string header =
      "| kernel | implementation | mode | device | parameters | step | at | run | before ms | "
      "after ms | change |\n|---|---|---|---|---|---|---:|---|---:|---:|---:|\n";
  const std::size_t table = md.find(header);
  ASSERT_NE(table, std::string::npos) << md;
  EXPECT_EQ(md.substr(table + header.size(), md.find('\n', table + header.size()) - table - header.size()),
            "| test_sleep | cpu | forward | NVIDIA H200 | id=1 run_ms=1 setup_ms=0 | slowdown | 5 | commit=c5 night=5 "
            "| 1 | 1.25 | +25.0% |");
  EXPECT_LT(md.find("| speed-up | 4 | commit=c4 night=4 |"), md.find("| pending | 7 | commit=c7 night=7 |")) << md;
  // A timeline for the point with the step, marked and labelled; none for a flat point.
  ASSERT_TRUE(fs::exists(timeline_of(report, 1))) << md;
  EXPECT_NE(md.find("](plots/" + timeline_of(report, 1).filename().string() + ")"), std::string::npos) << md;
  EXPECT_NE(read_text(timeline_of(report, 1)).find("commit=c5 night=5 +25.0%"), std::string::npos);
  EXPECT_FALSE(fs::exists(timeline_of(report, 2)));
  const std::string html = read_text(report / "index.html");
  EXPECT_EQ(std::count(html.begin(), html.end(), '<') - std::count(html.begin(), html.end(), '>'), 0);
  EXPECT_NE(html.find("<svg"), std::string::npos);
}

TEST_F(HistoryCommand, ReportTimelinesAllDrawsEveryPointAndTheHistoryOptionsNeedHistory) {
  const CommandOutput all = run_command(
      fmt::format("cd {} && {} report nightly -o all-report --history --timelines all --where id=2 --order label:night",
                  directory_->string(), KS_CLI));
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_TRUE(fs::exists(timeline_of(*directory_ / "all-report", 2)));
  EXPECT_NE(read_text(*directory_ / "all-report" / "report.md").find("No point has a step"), std::string::npos);
  const CommandOutput plain =
      run_command(fmt::format("cd {} && {} report nightly/n0.h5 -o plain --order time", directory_->string(), KS_CLI));
  EXPECT_EQ(plain.exit_code, 2) << plain.err;
  EXPECT_NE(plain.err.find("--order requires --history"), std::string::npos) << plain.err;
  const CommandOutput bad = run_command(
      fmt::format("cd {} && {} report nightly -o bad --history --min-change -1", directory_->string(), KS_CLI));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "kernelsweep report: --min-change must be a percentage of 0 or more, got -1\n");
}

}  // namespace
}  // namespace ks::testing
