// `kernelsweep show` and the failures `kernelsweep status` lists, on the results file of a real small
// sweep under mpirun: test_sleep points that pass (cpu) or are skipped (gpu_only, no GPU here) and
// test_crash points that pass, crash, throw, fail their check and time out; then resumed, so that the
// points that did not pass have two rows. Each format is read back and compared with the file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "store/results_file.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr const char* kSweep = R"(name: mixed
protocol:
  warmup_ms: 1
  rep_ms: 4
  max_repeat: 100
  flush_bytes: 0
kernels:
  - kernel: test_sleep
    implementations: [cpu, gpu_only]
    modes: [forward]
    fixed: {run_ms: 1}
    grid:
      id: [3, 1, 2]
  - kernel: test_crash
    timeout_s: 2
    grid:
      action: [none, abort, throw, fail_check, hang]
)";
constexpr std::size_t kPoints = 3 * 2 + 5;

// The run is calibrated (as `run` is by default): beside the rates, each point's speed of light
// and flags (the test kernels declare no work: no-work).
const std::vector<std::string> kDefaultColumns = {
    "kernel", "implementation", "mode",   "action", "id",      "run_ms", "setup_ms",   "status",   "median_ms",
    "p20_ms", "p80_ms",         "tflops", "gbps",   "sol_pct", "flags",  "peak_bytes", "n_repeat", "message"};

// RFC 4180: records of fields; quoted fields may hold commas, doubled quotes and line breaks.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, field_started = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
      field_started = true;
    } else if (c == '\r' || c == '\n') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (field_started || !field.empty() || !record.empty()) {
        record.push_back(std::move(field));
        records.push_back(std::move(record));
      }
      record.clear();
      field.clear();
      field_started = false;
    } else {
      field += c;
      field_started = true;
    }
  }
  if (field_started || !field.empty() || !record.empty()) {
    record.push_back(std::move(field));
    records.push_back(std::move(record));
  }
  return records;
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(' ');
  return first == std::string::npos ? "" : text.substr(first, text.find_last_not_of(' ') - first + 1);
}

class ShowTest : public ::testing::Test {
 protected:
  // The sweep is run once for the suite: its first results file is kept as first.h5, then the sweep
  // is resumed in mixed.h5.
  static void SetUpTestSuite() {
    dir_ = fresh_directory("show");
    write_file(dir_ / "sweep.yaml", kSweep);
    const std::string run =
        mpirun_test_cli(2, fmt::format("run {} --output-dir {}", (dir_ / "sweep.yaml").string(), dir_.string()));
    const auto first = run_shell(run);
    ASSERT_EQ(first.exit_code, 1) << "some points do not pass\n" << first.output;
    fs::copy_file(dir_ / "mixed.h5", dir_ / "first.h5");
    const auto resumed = run_shell(run + " --resume");
    ASSERT_EQ(resumed.exit_code, 1) << resumed.output;
  }

  static fs::path results() { return dir_ / "mixed.h5"; }

  // stdout of `kernelsweep show ARGS`; expects exit code 0 (and reports stderr otherwise).
  static std::string show(const std::string& args) {
    const fs::path errors = dir_ / "show.stderr";
    const auto r = run_shell(fmt::format("( {} show {} 2>{} )", KS_CLI, args, errors.string()));
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << run_shell("cat " + errors.string()).output;
    return r.output;
  }
  // exit code and stderr of a `kernelsweep show ARGS` expected to fail.
  static CommandResult show_refused(const std::string& args) {
    return run_shell(fmt::format("( {} show {} >/dev/null )", KS_CLI, args));
  }

  // Each point's latest row, by point id, as ResultsFile reads it.
  static std::map<std::string, StoredRun> latest_rows(const fs::path& file) {
    std::map<std::string, StoredRun> latest;
    for (StoredRun& run : ResultsFile::open_read_only(file).read_runs()) latest[run.point_id] = std::move(run);
    return latest;
  }

  static fs::path dir_;
};

fs::path ShowTest::dir_;

// The text CSV has for a figure in ns, shown in ms: empty for a point that was not timed.
std::string expected_ms(const StoredRun& run, double ns) {
  if (run.n_repeat == 0) return "";
  return fmt::format("{}", ns / 1e6);
}

TEST_F(ShowTest, TableHasOneRowPerPointWithItsParametersAsColumns) {
  const auto lines = lines_of(show(results().string()));
  ASSERT_EQ(lines.size(), 2 + kPoints) << "a header, a rule, one line per point";
  std::vector<std::string> header;
  std::stringstream words(lines[0]);
  for (std::string word; words >> word;) header.push_back(word);
  EXPECT_EQ(header, kDefaultColumns);
  EXPECT_EQ(lines[1].find_first_not_of("- "), std::string::npos) << lines[1];
  // Sorted by kernel, implementation, mode, then parameters by value (id 1, 2, 3).
  EXPECT_EQ(lines[2].rfind("test_crash", 0), 0u) << lines[2];
  std::vector<std::string> sleepers;
  for (const auto& line : lines)
    if (line.rfind("test_sleep", 0) == 0) sleepers.push_back(line);
  ASSERT_EQ(sleepers.size(), 6u);
  EXPECT_NE(sleepers[0].find(" cpu "), std::string::npos);
  EXPECT_NE(sleepers[5].find(" gpu_only "), std::string::npos);
  const std::regex ids(R"(forward\s+(\d))");
  std::string order;
  for (const auto& line : sleepers) {
    std::smatch match;
    ASSERT_TRUE(std::regex_search(line, match, ids)) << line;
    order += match[1].str();
  }
  EXPECT_EQ(order, "123123");
  // A crashed point shows why; a passed one shows no check summary.
  bool crashed_seen = false;
  for (const auto& line : lines) {
    if (line.find(" crashed ") != std::string::npos) {
      crashed_seen = true;
      EXPECT_NE(line.find("abort"), std::string::npos) << line;
      EXPECT_GT(line.size(), line.find(" crashed ") + 20) << "its message: " << line;
    }
    if (line.find(" passed ") != std::string::npos) { EXPECT_EQ(line.find("sleeps agree"), std::string::npos) << line; }
  }
  EXPECT_TRUE(crashed_seen);
}

TEST_F(ShowTest, TableFiguresHaveFourSignificantDigitsAndUntimedOnesAreEmpty) {
  // test_crash does no work (no flops, no bytes): its rates are empty too.
  const auto lines =
      lines_of(show(results().string() + " --columns status,n_repeat,median_ms,p20_ms,p80_ms,tflops,gbps"));
  ASSERT_EQ(lines.size(), 2 + kPoints);
  const std::regex timed_line(
      R"(^\s*(passed|failed)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)(?:\s+([0-9.]+)\s+([0-9.]+))?$)");
  for (std::size_t i = 2; i < lines.size(); ++i) {
    const std::string status = trimmed(lines[i]).substr(0, trimmed(lines[i]).find(' '));
    if (status == "passed" || status == "failed") {
      std::smatch match;
      ASSERT_TRUE(std::regex_match(lines[i], match, timed_line)) << lines[i];
      for (int figure = 3; figure <= 7; ++figure) {
        if (!match[figure].matched) continue;
        std::string digits = match[figure].str();
        digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
        digits.erase(0, digits.find_first_not_of('0'));
        EXPECT_GE(digits.size(), 4u) << match[figure];
        if (std::stod(match[figure].str()) < 1000) { EXPECT_EQ(digits.size(), 4u) << match[figure]; }
      }
    } else {
      EXPECT_EQ(trimmed(lines[i]), status) << "untimed figures print empty: '" << lines[i] << "'";
    }
  }
}

TEST_F(ShowTest, CsvReadsBackAsTheFilesValues) {
  const auto latest = latest_rows(results());
  const auto records = parse_csv(
      show(results().string() + " --format csv --columns point,status,median_ms,p20_ms,p80_ms,mean_ms,min_ms,max_ms,"
                                "stddev_ms,tflops,gbps,flops,bytes,peak_bytes,n_repeat,n_warmup,message,check,rows"));
  ASSERT_EQ(records.size(), 1 + kPoints);
  EXPECT_EQ(records[0].front(), "point");
  EXPECT_EQ(records[0].back(), "rows");
  std::set<std::string> points;
  for (std::size_t i = 1; i < records.size(); ++i) {
    const auto& f = records[i];
    ASSERT_EQ(f.size(), records[0].size());
    ASSERT_TRUE(latest.contains(f[0])) << f[0];
    points.insert(f[0]);
    const StoredRun& run = latest.at(f[0]);
    SCOPED_TRACE(run.kernel + " " + run.params_json + " " + run.status);
    EXPECT_EQ(f[1], run.status);
    EXPECT_EQ(f[2], expected_ms(run, run.stats.median_ns));
    EXPECT_EQ(f[3], expected_ms(run, run.stats.p20_ns));
    EXPECT_EQ(f[4], expected_ms(run, run.stats.p80_ns));
    EXPECT_EQ(f[5], expected_ms(run, run.stats.mean_ns));
    EXPECT_EQ(f[6], expected_ms(run, run.stats.min_ns));
    EXPECT_EQ(f[7], expected_ms(run, run.stats.max_ns));
    EXPECT_EQ(f[8], expected_ms(run, run.stats.stddev_ns));
    if (run.n_repeat > 0) {
      // Read back as numbers, the figures are the file's, to the last bit.
      EXPECT_EQ(std::stod(f[2]), run.stats.median_ns / 1e6);
      if (run.flops > 0) {
        EXPECT_EQ(std::stod(f[9]), run.tflops);
        EXPECT_EQ(std::stod(f[10]), run.gbps);
      } else {
        EXPECT_EQ(f[9], "") << "no rate for a kernel that declares no work";
      }
      EXPECT_EQ(std::stod(f[11]), run.flops);
      EXPECT_EQ(std::stod(f[12]), run.bytes);
      EXPECT_EQ(f[14], std::to_string(run.n_repeat));
      EXPECT_EQ(f[15], std::to_string(run.n_warmup));
    } else {
      for (int c : {9, 10, 11, 12, 14, 15}) EXPECT_EQ(f[c], "") << records[0][c] << " of an untimed point";
      EXPECT_TRUE(std::isnan(run.stats.median_ns)) << "the file holds NaN for an untimed figure";
    }
    EXPECT_EQ(f[13], run.device_peak_bytes > 0 ? std::to_string(run.device_peak_bytes) : "");
    EXPECT_EQ(f[16], run.status == "passed" ? "" : run.message);
    EXPECT_EQ(f[17], run.status == "passed" ? run.message : "");
  }
  EXPECT_EQ(points.size(), kPoints) << "each point once";
}

TEST_F(ShowTest, CsvHasTheDefaultColumnsAndEmptyCellsForOtherKernelsParameters) {
  const std::string text = show(results().string() + " --format csv");
  const auto records = parse_csv(text);
  ASSERT_EQ(records.size(), 1 + kPoints);
  EXPECT_EQ(records[0], kDefaultColumns);
  EXPECT_NE(text.find("\r\n"), std::string::npos) << "RFC 4180 ends records with CRLF";
  for (std::size_t i = 1; i < records.size(); ++i) {
    const auto& f = records[i];
    ASSERT_EQ(f.size(), kDefaultColumns.size());
    if (f[0] == "test_crash") {
      EXPECT_EQ(f[4], "0") << "test_crash's id, its default";
      EXPECT_EQ(f[5], "") << "test_crash has no run_ms";
    } else {
      EXPECT_EQ(f[3], "") << "test_sleep has no action";
      EXPECT_EQ(f[5], "1");
    }
  }
}

// A results file of these rows alone, written through the store as sweep `name`, in `dir`.
fs::path stored_results(const fs::path& dir, const std::string& name, std::vector<StoredRun> rows) {
  const fs::path path = dir / (name + ".h5");
  fs::remove(path);
  RunInfo info;
  info.sweep_name = name;
  info.started_at = "2026-12-01T00:00:00.000Z";
  ResultsFile file = ResultsFile::create(path, info);
  file.append(rows);
  file.finish("2026-12-01T00:00:01.000Z");
  return path;
}

// A file written through the store whose message and parameter hold what CSV must quote and
// markdown must escape.
fs::path awkward_results(const fs::path& dir) {
  RunRecord run;
  run.point_id = "0123";
  run.kernel = "test_sleep";
  run.implementation = "cpu";
  run.mode = "forward";
  run.params_json = R"({"label":"a,b","id":1})";
  run.status = "failed";
  run.message = "first line, with \"quotes\" | a bar\nsecond line";
  return stored_results(dir, "awkward", {StoredRun(run, Citations{})});
}

TEST_F(ShowTest, CsvQuotesWhatItMustAndTablesShowTheMessagesFirstLine) {
  const fs::path awkward = awkward_results(dir_);
  const std::string text = show(awkward.string() + " --format csv --columns label,message");
  EXPECT_EQ(text, "label,message\r\n\"a,b\",\"first line, with \"\"quotes\"\" | a bar\nsecond line\"\r\n");
  const auto records = parse_csv(text);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1], (std::vector<std::string>{"a,b", "first line, with \"quotes\" | a bar\nsecond line"}));
  EXPECT_EQ(Json::parse(show(awkward.string() + " --format json --columns message"))[0].at("message"),
            "first line, with \"quotes\" | a bar\nsecond line");
  const auto table = lines_of(show(awkward.string() + " --columns label,message"));
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[2], "a,b    first line, with \"quotes\" | a bar");
  const auto markdown = lines_of(show(awkward.string() + " --format md --columns label,message"));
  ASSERT_EQ(markdown.size(), 3u);
  EXPECT_EQ(markdown[2], "| a,b   | first line, with \"quotes\" \\| a bar |");
}

// Two timed GPU points written through the store, one with an energy figure (a window of a second
// or more) and one without: the energy columns come after the rates and their flags by default, and
// the point without a figure has them empty.
TEST_F(ShowTest, EnergyColumnsAreShownByDefaultWhereARowHasAFigure) {
  std::vector<StoredRun> rows;
  for (const int id : {1, 2}) {
    RunRecord run;
    run.point_id = fmt::format("000{}", id);
    run.kernel = "test_sleep";
    run.implementation = "gpu_only";
    run.mode = "forward";
    run.params_json = fmt::format(R"({{"id":{}}})", id);
    run.status = "passed";
    run.n_repeat = 1;
    run.stats = {250e3, 250e3, 250e3, 250e3, 250e3, 250e3, 0};
    run.flops = 1.374e11;
    run.tflops = run.flops / run.stats.median_ns / 1e3;
    run.flags = "in-cache";
    if (id == 1) {
      run.joules_per_call = 0.175;
      run.gflops_per_joule = run.flops / 1e9 / run.joules_per_call;
      run.energy_window_s = 1.02;
    }
    rows.emplace_back(run, Citations{});
  }
  const fs::path path = stored_results(dir_, "energy", std::move(rows));

  const auto table = lines_of(show(path.string()));
  ASSERT_EQ(table.size(), 4u);
  std::vector<std::string> header;
  std::istringstream words(table[0]);
  for (std::string word; words >> word;) header.push_back(word);
  const auto flags = std::find(header.begin(), header.end(), "flags");
  ASSERT_GE(std::distance(flags, header.end()), 3) << table[0];
  EXPECT_EQ(*(flags + 1), "joules_per_call") << table[0];
  EXPECT_EQ(*(flags + 2), "gflops_per_joule") << table[0];
  const Json json = Json::parse(show(path.string() + " --format json"));
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0].at("joules_per_call"), 0.175);
  EXPECT_DOUBLE_EQ(json[0].at("gflops_per_joule").get<double>(), 1.374e11 / 1e9 / 0.175);
  EXPECT_FALSE(json[0].contains("energy_window_s")) << "on request only";
  EXPECT_TRUE(json[1].at("joules_per_call").is_null());
  EXPECT_TRUE(json[1].at("gflops_per_joule").is_null());
  EXPECT_EQ(Json::parse(show(path.string() + " --format json --columns id,energy_window_s"))[0].at("energy_window_s"),
            1.02);
}

TEST_F(ShowTest, JsonReadsBackWithNumbersAndNulls) {
  const auto latest = latest_rows(results());
  const auto rows = nlohmann::ordered_json::parse(show(results().string() + " --format json"));
  const auto csv = parse_csv(show(results().string() + " --format csv"));
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), kPoints);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    SCOPED_TRACE(row.dump());
    std::vector<std::string> keys;
    for (const auto& item : row.items()) keys.push_back(item.key());
    EXPECT_EQ(keys, kDefaultColumns) << "the columns, in order";
    const bool timed = row.at("status") == "passed" || row.at("status") == "failed";
    for (const char* figure : {"median_ms", "p20_ms", "p80_ms", "n_repeat"})
      EXPECT_TRUE(timed ? row.at(figure).is_number() : row.at(figure).is_null()) << figure;
    const bool works = row.at("kernel") == "test_sleep";  // test_crash declares no flops or bytes
    for (const char* rate : {"tflops", "gbps"})
      EXPECT_TRUE(timed && works ? row.at(rate).is_number() : row.at(rate).is_null()) << rate;
    // Against the rank's calibration: a point with work has its floor, one without is flagged.
    EXPECT_TRUE(timed && works ? row.at("sol_pct").is_number() : row.at("sol_pct").is_null());
    if (timed && !works) { EXPECT_EQ(row.at("flags"), "no-work"); }
    if (!timed) { EXPECT_EQ(row.at("flags"), ""); }
    EXPECT_TRUE(row.at("id").is_number_integer());
    EXPECT_TRUE(row.at("kernel") == "test_crash" ? row.at("action").is_string() : row.at("action").is_null());
    // The same rows and values as the CSV.
    for (std::size_t c = 0; c < kDefaultColumns.size(); ++c) {
      const auto& value = row.at(kDefaultColumns[c]);
      const std::string text = value.is_null() ? "" : value.is_string() ? value.get<std::string>() : value.dump();
      if (value.is_number_float()) {
        EXPECT_EQ(value.get<double>(), std::stod(csv[i + 1][c])) << kDefaultColumns[c];
      } else {
        EXPECT_EQ(text, csv[i + 1][c]) << kDefaultColumns[c];
      }
    }
  }
  // The figures are the file's.
  const Json with_points = Json::parse(show(results().string() + " --format json --columns point,median_ms,tflops"));
  for (const Json& row : with_points) {
    const StoredRun& run = latest.at(row.at("point").get<std::string>());
    if (run.n_repeat == 0) continue;
    EXPECT_EQ(row.at("median_ms").get<double>(), run.stats.median_ns / 1e6);
    if (run.flops > 0) { EXPECT_EQ(row.at("tflops").get<double>(), run.tflops); }
  }
}

TEST_F(ShowTest, MarkdownIsAGithubTable) {
  const auto lines = lines_of(show(results().string() + " --format md"));
  ASSERT_EQ(lines.size(), 2 + kPoints);
  for (const auto& line : lines) {
    EXPECT_EQ(line.front(), '|') << line;
    EXPECT_EQ(line.back(), '|') << line;
  }
  EXPECT_TRUE(std::regex_match(lines[1], std::regex(R"(^(\| -+[-:] )+\|$)"))) << lines[1];
  EXPECT_NE(lines[1].find(":"), std::string::npos) << "figures are right-aligned";
  EXPECT_EQ(std::count(lines[0].begin(), lines[0].end(), '|'), static_cast<long>(kDefaultColumns.size() + 1));
}

TEST_F(ShowTest, WhereAndColumnsPickTheRowsAndColumns) {
  const auto records =
      parse_csv(show(results().string() + " --format csv --where 'kernel=test_crash and action=throw|abort'"
                                          " --columns action,status,kernel"));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0], (std::vector<std::string>{"action", "status", "kernel"}));
  EXPECT_EQ(records[1], (std::vector<std::string>{"abort", "crashed", "test_crash"}));
  EXPECT_EQ(records[2], (std::vector<std::string>{"throw", "error", "test_crash"}));
  // Only the shown kernels' parameters are default columns.
  const auto sleepers = parse_csv(show(results().string() + " --format csv --where 'kernel=test_sleep,id>=2'"));
  ASSERT_EQ(sleepers.size(), 1 + 4u);
  EXPECT_EQ(std::count(sleepers[0].begin(), sleepers[0].end(), "action"), 0);
  EXPECT_EQ(std::count(sleepers[0].begin(), sleepers[0].end(), "run_ms"), 1);
  // Nothing matches: the header alone, or an empty array.
  EXPECT_EQ(parse_csv(show(results().string() + " --format csv --where kernel=gemm")).size(), 1u);
  EXPECT_EQ(Json::parse(show(results().string() + " --format json --where kernel=gemm")), Json::array());
}

TEST_F(ShowTest, ResumedPointShowsOnceWithItsLatestRow) {
  const auto all_rows = ResultsFile::open_read_only(results()).read_runs();
  std::vector<StoredRun> aborts;
  for (const auto& run : all_rows)
    if (run.params_json.find("\"abort\"") != std::string::npos) aborts.push_back(run);
  ASSERT_EQ(aborts.size(), 2u) << "the resumed session reran the crashed point";
  const Json shown =
      Json::parse(show(results().string() + " --format json --where action=abort --columns point,rows,started_at"));
  ASSERT_EQ(shown.size(), 1u);
  EXPECT_EQ(shown[0].at("rows"), 2);
  EXPECT_EQ(shown[0].at("started_at"), aborts.back().started_at);
  EXPECT_NE(aborts.front().started_at, aborts.back().started_at);
}

TEST_F(ShowTest, SeveralFilesComeOneAfterTheOther) {
  const std::string first = (dir_ / "first.h5").string(), second = results().string();
  const auto records = parse_csv(show(first + " " + second + " --format csv"));
  ASSERT_EQ(records.size(), 1 + 2 * kPoints);
  EXPECT_EQ(records[0].front(), "file");
  for (std::size_t i = 1; i <= kPoints; ++i) EXPECT_EQ(records[i][0], first);
  for (std::size_t i = kPoints + 1; i <= 2 * kPoints; ++i) EXPECT_EQ(records[i][0], second);
  // One file: no file column, unless asked for.
  EXPECT_EQ(parse_csv(show(second + " --format csv"))[0].front(), "kernel");
  EXPECT_EQ(parse_csv(show(second + " --format csv --columns file,kernel"))[1][0], second);
}

TEST_F(ShowTest, BadInputIsOneLineAndExitCodeTwo) {
  write_file(dir_ / "not-results.h5", "not an HDF5 file\n");
  const struct {
    std::string args, expected;
  } cases[] = {
      {results().string() + " --where 'id>>2'", "id>>2"},
      {results().string() + " --where 'id<abc'", "abc"},
      {results().string() + " --columns kernel,speed", "speed"},
      {(dir_ / "not-results.h5").string(), "not-results.h5"},
      {(dir_ / "missing.h5").string(), "missing.h5"},
      {(dir_ / "sweep.yaml").string(), "sweep.yaml"},
  };
  for (const auto& c : cases) {
    const auto r = show_refused(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "one line: " << r.output;
    EXPECT_EQ(r.output.rfind("kernelsweep show: ", 0), 0u) << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << r.output;
  }
  const auto unknown = show_refused(results().string() + " --columns speed");
  for (const char* known : {"kernel", "median_ms", "message", "action", "run_ms"})
    EXPECT_NE(unknown.output.find(known), std::string::npos) << "names the known columns: " << unknown.output;
}

TEST_F(ShowTest, StatusListsThePointsThatDidNotPass) {
  const auto text = run_shell(fmt::format("{} status {}", KS_TEST_CLI, results().string()));
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("not passed: 4 points"), std::string::npos) << text.output;
  const std::map<std::string, std::string> expected = {
      {"abort", "crashed"}, {"throw", "error"}, {"fail_check", "failed"}, {"hang", "timeout"}};
  const auto latest = latest_rows(results());
  for (const auto& [action, status] : expected) {
    const std::regex line(fmt::format(R"(\n  {}\s+test_crash/cpu/forward action={} id=0: ([^\n]+)\n)", status, action));
    std::smatch match;
    ASSERT_TRUE(std::regex_search(text.output, match, line)) << action << "\n" << text.output;
    for (const auto& [id, run] : latest)
      if (run.params_json.find('"' + action + '"') != std::string::npos) {
        EXPECT_EQ(run.message.rfind(match[1].str().substr(0, match[1].length() - 3), 0), 0u) << match[1];
      }
  }
  EXPECT_EQ(text.output.find("sleeps agree"), std::string::npos) << "passed points are not listed";

  const auto json = run_shell(fmt::format("{} status {} --json 2>/dev/null", KS_TEST_CLI, results().string()));
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const Json status = Json::parse(json.output);
  ASSERT_EQ(status.at("not_passed").size(), 4u) << status.dump(2);
  for (const Json& point : status.at("not_passed")) {
    const std::string action = point.at("params").at("action");
    EXPECT_EQ(point.at("status"), expected.at(action));
    EXPECT_EQ(point.at("kernel"), "test_crash");
    EXPECT_EQ(point.at("implementation"), "cpu");
    EXPECT_EQ(point.at("mode"), "forward");
    EXPECT_FALSE(point.at("message").get<std::string>().empty());
    EXPECT_EQ(point.at("message").get<std::string>().find('\n'), std::string::npos);
    EXPECT_LE(point.at("message").get<std::string>().size(), 100u);
    EXPECT_EQ(latest.at(point.at("point_id").get<std::string>()).status, point.at("status"));
  }
}

}  // namespace
}  // namespace ks::testing
