// `kernelsweep import liger`: Liger-Kernel's benchmark CSV (tests/data/liger/, the real file of 2448
// rows) into a results file and kernelindex documents. The seed document (tests/data/seed/) is
// Liger's own row of distill_cosine_loss/full/liger at 1024 tokens: the import must write it as the
// seed has it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernelindex/document_reader.h"
#include "kernelindex/kernelindex.h"
#include "report/commands.h"
#include "report/csv.h"
#include "report/import.h"
#include "report/import_liger.h"
#include "run/run.h"
#include "store/results_file.h"
#include "support/cli_runner.h"
#include "view/view.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const fs::path kLigerCsv = fs::path(KS_SOURCE_DIR) / "tests/data/liger/liger_all_benchmark_data.csv";
constexpr std::size_t kLigerRows = 2448;
constexpr const char* kSeedExternalId =
    "distill_cosine_loss/full/liger/nvidia-a100-sxm4-80gb/hidden4096-tokens1024-vocab128256-bf16/2025-06-27-09-21-16";

std::vector<std::string> non_empty_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

// The seed file starts with a line naming its source ("Liger") before the JSON.
Json seed_document() {
  const std::string text = read_text(KS_SEED_DOCUMENT);
  return Json::parse(text.substr(text.find('{')));
}

std::string import_command(const fs::path& csv, const fs::path& output, const std::string& options = "") {
  return fmt::format("{} import liger {} -o {} {}", KS_CLI, csv.string(), output.string(), options);
}

// The whole CSV imported once (jsonl documents), shared by the tests that read it.
class LigerImport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    directory_ = new fs::path(fresh_directory("import-liger"));
    result_ = new CommandResult(run_shell(import_command(kLigerCsv, results(), "--kernelindex-format jsonl")));
  }
  static void TearDownTestSuite() {
    delete directory_;
    delete result_;
  }
  static fs::path results() { return *directory_ / "liger.h5"; }
  static fs::path documents() { return *directory_ / "kernelindex"; }
  static std::vector<Json> objects() {
    std::vector<Json> out;
    ks::for_each_document(documents(), {}, [&](std::string_view line) { out.push_back(Json::parse(line)); });
    return out;
  }
  static Json object_with_external_id(const std::string& id) {
    for (Json& object : objects())
      if (object["run"]["spec"]["sourceNative"]["externalId"] == id) return object;
    return nullptr;
  }

  static fs::path* directory_;
  static CommandResult* result_;
};
fs::path* LigerImport::directory_ = nullptr;
CommandResult* LigerImport::result_ = nullptr;

TEST_F(LigerImport, EveryRowOfTheCsvBecomesARunRowAndADocument) {
  ASSERT_EQ(result_->exit_code, kExitOk) << result_->output;
  EXPECT_NE(result_->output.find(fmt::format("imported {0} of {0} rows (1469 points)", kLigerRows)), std::string::npos)
      << result_->output;
  EXPECT_EQ(result_->output.find("skipped"), std::string::npos) << result_->output;

  const ResultsFile file = ResultsFile::open_read_only(results());
  const RunInfo info = file.read_info();
  EXPECT_EQ(info.sweep_name, "liger-import");
  EXPECT_EQ(info.sweep_path, kLigerCsv.string());
  EXPECT_EQ(info.sweep_text, "");
  EXPECT_EQ(info.plan_size, 1469);
  EXPECT_FALSE(info.ended_at.empty());
  EXPECT_EQ(file.sample_count(), 0u);

  std::map<std::string, int> statuses;
  int speed = 0, memory = 0;
  for (const StoredRun& run : file.read_runs()) {
    ++statuses[run.status];
    EXPECT_EQ(run.samples_count, 0u);
    EXPECT_EQ(run.n_repeat, 0);
    EXPECT_TRUE(std::isnan(run.stats.mean_ns) && std::isnan(run.flops) && std::isnan(run.tflops));
    if (run.device_peak_bytes > 0) {  // a memory row: no timing
      ++memory;
      EXPECT_TRUE(std::isnan(run.stats.median_ns) && std::isnan(run.stats.p20_ns) && std::isnan(run.stats.p80_ns));
      EXPECT_FALSE(timed(run));
    } else {  // a speed row: a timing without samples, which the view takes for one
      ++speed;
      EXPECT_GT(run.stats.median_ns, 0);
      EXPECT_TRUE(std::isfinite(run.stats.p20_ns) && std::isfinite(run.stats.p80_ns));
      EXPECT_TRUE(timed(run)) << run.point_id;
    }
    EXPECT_EQ(run.cited.protocol_digest.rfind("sha256:", 0), 0u);
  }
  EXPECT_EQ(statuses, (std::map<std::string, int>{{"passed", static_cast<int>(kLigerRows)}}));
  EXPECT_EQ(speed, 1649);                          // the CSV's speed rows
  EXPECT_EQ(memory, 799);                          // and its memory rows
  EXPECT_EQ(file.read_environments().size(), 6u);  // six GPU names
  EXPECT_EQ(file.read_protocols().size(), 6u);     // speed and memory, of full, forward and backward
}

TEST_F(LigerImport, DocumentsCiteWhatTheyCarryAndAreNamedApart) {
  const ResultsFile file = ResultsFile::open_read_only(results());
  std::set<std::string> protocols, environments;
  for (const auto& document : file.read_protocols()) protocols.insert(document.digest);
  for (const auto& document : file.read_environments()) environments.insert(document.digest);
  std::set<std::string> point_ids;
  for (const StoredRun& run : file.read_runs()) point_ids.insert(run.point_id);

  const std::vector<Json> all = objects();
  ASSERT_EQ(all.size(), kLigerRows);
  std::set<std::string> names, external_ids;
  for (const Json& object : all) {
    EXPECT_EQ(ks::digest_mismatches(object), std::vector<std::string>{});
    const Json& run = object["run"];
    names.insert(run["metadata"]["name"].get<std::string>());
    external_ids.insert(run["spec"]["sourceNative"]["externalId"].get<std::string>());
    EXPECT_LE(run["metadata"]["name"].get<std::string>().size(), ks::kMaxMetadataNameLength);
    EXPECT_TRUE(protocols.count(run["spec"]["protocolDigest"].get<std::string>()));
    EXPECT_TRUE(environments.count(run["spec"]["environmentDigest"].get<std::string>()));
    EXPECT_TRUE(point_ids.count(run["spec"]["sourceNative"]["pointId"].get<std::string>()));
    EXPECT_EQ(run["spec"]["sourceNative"]["source"], "liger-kernel-bench");
    EXPECT_TRUE(run["metadata"]["labels"].contains("liger_version"));
  }
  EXPECT_EQ(names.size(), kLigerRows);
  EXPECT_EQ(external_ids.size(), kLigerRows);
}

// Every value the seed has is the imported row's, at the same key path, but for the two documents the
// seed's maker described in its own way (the workload under kernelindex's parameter names, the
// implementation) and the digests that cite them.
void expect_same_values(const Json& seed, const Json& ours, const std::string& path, int& compared) {
  static const std::set<std::string> own_documents = {"run.spec.workloadDigest", "run.spec.implementationDigest",
                                                      "workload", "implementation"};
  if (own_documents.count(path)) return;
  if (seed.is_object()) {
    ASSERT_TRUE(ours.is_object()) << path << ": " << ours.dump();
    for (const auto& [key, value] : seed.items()) {
      const std::string at = path.empty() ? key : path + "." + key;
      if (own_documents.count(at)) continue;
      ASSERT_TRUE(ours.contains(key)) << "missing " << at;
      expect_same_values(value, ours[key], at, compared);
    }
  } else if (seed.is_array()) {
    ASSERT_TRUE(ours.is_array()) << path;
    ASSERT_EQ(ours.size(), seed.size()) << path << ": " << ours.dump();
    for (std::size_t i = 0; i < seed.size(); ++i)
      expect_same_values(seed[i], ours[i], fmt::format("{}[{}]", path, i), compared);
  } else {
    EXPECT_EQ(ours, seed) << path;
    ++compared;
  }
}

TEST_F(LigerImport, TheSeedRowComesOutAsTheSeedHasIt) {
  const Json seed = seed_document();
  ASSERT_EQ(seed["run"]["spec"]["sourceNative"]["externalId"], kSeedExternalId);
  const Json ours = object_with_external_id(kSeedExternalId);
  ASSERT_FALSE(ours.is_null()) << "no imported run has the seed's externalId";
  int compared = 0;
  expect_same_values(seed, ours, "", compared);
  EXPECT_GE(compared, 30);  // every leaf of the seed's run, protocol and environment
  // Named explicitly, what the comparison above covers: the digests that make figures comparable.
  EXPECT_EQ(ours["run"]["spec"]["protocolDigest"], seed["run"]["spec"]["protocolDigest"]);
  EXPECT_EQ(ours["run"]["spec"]["environmentDigest"], seed["run"]["spec"]["environmentDigest"]);
  EXPECT_EQ(ours["run"]["metadata"]["name"], seed["run"]["metadata"]["name"]);
  EXPECT_EQ(ours["run"]["spec"]["sourceNative"]["metrics"], seed["run"]["spec"]["sourceNative"]["metrics"]);
  // The workload is Liger's row under kernelsweep's parameter names; the CSV's own fields are in sourceNative.
  EXPECT_EQ(ours["workload"]["spec"]["parameters"],
            Json::parse(R"({"tokens": 1024, "hidden": 4096, "vocab": 128256, "mode": "forward", "dtype": "bf16",
                            "bias": false, "weight_hard_loss": 0.5, "weight_soft_loss": 0.5, "ignore_index": -100})"));
}

TEST_F(LigerImport, APointsCurrentRowIsItsTimingAndItsMemoryRowStaysInTheFile) {
  const std::string seed_point = object_with_external_id(kSeedExternalId)["run"]["spec"]["sourceNative"]["pointId"];
  const ResultsFile file = ResultsFile::open_read_only(results());
  const std::vector<ViewRow> view = current_view(file, results().string());
  EXPECT_EQ(view.size(), 1469u);
  const ViewRow* seed_row = nullptr;
  for (const ViewRow& row : view)
    if (row.run.point_id == seed_point) seed_row = &row;
  ASSERT_NE(seed_row, nullptr);
  EXPECT_TRUE(timed(seed_row->run));
  EXPECT_DOUBLE_EQ(seed_row->run.stats.median_ns, 14.654463768005371 * 1e6);
  EXPECT_EQ(seed_row->rows_of_point, 2u);  // its peak-memory row, stored before it
  EXPECT_EQ(seed_row->params["tokens"], 1024);
  EXPECT_EQ(seed_row->params["dtype"], "bf16");
  std::uint64_t peak = 0;
  for (const StoredRun& run : file.read_runs())
    if (run.point_id == seed_point && run.device_peak_bytes > 0) peak = run.device_peak_bytes;
  EXPECT_EQ(peak, 5305027072u);  // 5059.26806640625 MB of 2**20 bytes
  std::size_t timed_points = 0;
  for (const ViewRow& row : view) timed_points += timed(row.run) ? 1 : 0;
  EXPECT_EQ(timed_points, 1469u - 8u);  // all but the 8 points Liger measured for memory only
}

TEST_F(LigerImport, StatusReadsTheImportedFile) {
  const CommandResult status = run_shell(fmt::format("{} status {}", KS_CLI, results().string()));
  ASSERT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("2448 rows, 0 samples, 1 session(s)"), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("passed   1469"), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("missing: 0 points"), std::string::npos) << status.output;
}

TEST_F(LigerImport, ShowReadsTheImportedFile) {
  const CommandOutput show = run_command(fmt::format(
      "{} show {} --where 'kernel=distill_cosine_loss,implementation=liger,mode=full,tokens=1024' --format json",
      KS_CLI, results().string()));
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const Json rows = Json::parse(show.out, nullptr, false);
  ASSERT_FALSE(rows.is_discarded()) << show.out;
  ASSERT_EQ(rows.size(), 1u) << show.out;
  EXPECT_DOUBLE_EQ(rows[0].at("median_ms").get<double>(), 14.654463768005371);  // the seed's median
  EXPECT_DOUBLE_EQ(rows[0].at("p20_ms").get<double>(), 14.63398380279541);
  EXPECT_DOUBLE_EQ(rows[0].at("p80_ms").get<double>(), 14.68006420135498);
}

TEST_F(LigerImport, AnExistingOutputNeedsOverwrite) {
  const CommandResult again = run_shell(import_command(kLigerCsv, results(), "--kernelindex-format jsonl"));
  EXPECT_EQ(again.exit_code, kExitBadInput) << again.output;
  EXPECT_NE(again.output.find("results file exists; pass --overwrite"), std::string::npos) << again.output;
  const CommandResult overwritten =
      run_shell(import_command(kLigerCsv, results(), "--kernelindex-format jsonl --overwrite"));
  ASSERT_EQ(overwritten.exit_code, kExitOk) << overwritten.output;
  EXPECT_EQ(objects().size(), kLigerRows);  // started again, not appended to
  EXPECT_EQ(ResultsFile::open_read_only(results()).run_count(), kLigerRows);
}

TEST(ImportLiger, JsonDocumentsAreOneFilePerRunInTheChosenFolder) {
  const fs::path directory = fresh_directory("import-liger-json");
  const CommandResult result = run_shell(
      import_command(kLigerCsv, directory / "out" / "liger.h5", "--documents " + (directory / "docs").string()));
  ASSERT_EQ(result.exit_code, kExitOk) << result.output;
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(directory / "docs"))
    files += entry.path().extension() == ".json" ? 1 : 0;
  EXPECT_EQ(files, kLigerRows);
  const Json seed = seed_document();
  const fs::path seed_file = directory / "docs" / (seed["run"]["metadata"]["name"].get<std::string>() + ".json");
  ASSERT_TRUE(fs::exists(seed_file));
  EXPECT_EQ(Json::parse(read_text(seed_file))["run"]["spec"]["sourceNative"]["externalId"], kSeedExternalId);
}

// --- bad input -------------------------------------------------------------------------------------

const std::string kHeader =
    "kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,x_label,x_value,"
    "y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,timestamp,liger_version\n";
const std::string kSpeedRow =
    "rms_norm,liger,full,speed,ms,H,hidden size,1024,0.5,0.4,0.6,\"{\"\"M\"\": 2048, \"\"dtype\"\": "
    "\"\"torch.bfloat16\"\"}\",NVIDIA H100 80GB HBM3,2025-01-02 03:04:05,0.5.2\n";

CommandResult import_text(const std::string& name, const std::string& text, fs::path* output = nullptr) {
  const fs::path directory = fresh_directory("import-liger-" + name);
  write_file(directory / "bench.csv", text);
  if (output) *output = directory / "out.h5";
  return run_shell(import_command(directory / "bench.csv", directory / "out.h5"));
}

// One line on stderr that names the file, the line and the column; no results file.
void expect_one_line_naming(const CommandResult& result, const std::string& line_and_column, const std::string& what) {
  EXPECT_EQ(result.exit_code, kExitBadInput) << result.output;
  EXPECT_EQ(non_empty_lines(result.output).size(), 1u) << result.output;
  EXPECT_NE(result.output.find("bench.csv:" + line_and_column), std::string::npos) << result.output;
  EXPECT_NE(result.output.find(what), std::string::npos) << result.output;
}

TEST(ImportLiger, AMissingColumnIsBadInputNamingTheColumn) {
  std::string header = kHeader;
  header.replace(header.find("y_value_20,"), 11, "");
  std::string row = kSpeedRow;
  row.replace(row.find("0.4,"), 4, "");
  fs::path output;
  expect_one_line_naming(import_text("missing-column", header + row, &output), "1: column y_value_20: missing",
                         "header has");
  EXPECT_FALSE(fs::exists(output));
}

TEST(ImportLiger, ANumberThatIsNotOneIsBadInputNamingLineAndColumn) {
  std::string bad = kSpeedRow;
  bad.replace(bad.find("0.5,"), 4, "0.5ms,");
  fs::path output;
  expect_one_line_naming(import_text("bad-number", kHeader + kSpeedRow + bad, &output), "3: column y_value_50",
                         "'0.5ms' is not a number");
  EXPECT_FALSE(fs::exists(output));
}

TEST(ImportLiger, AShortRowAndABadConfigAndABadTimeAreBadInput) {
  expect_one_line_naming(import_text("short-row", kHeader + "rms_norm,liger,full\n"), "2: column metric_name",
                         "missing");
  std::string config = kSpeedRow;
  config.replace(config.find("\"{"), config.find("}\"") + 2 - config.find("\"{"), "[1 2]");
  expect_one_line_naming(import_text("bad-config", kHeader + config), "2: column extra_benchmark_config_str", "[1 2]");
  std::string time = kSpeedRow;
  time.replace(time.find("2025-01-02 03:04:05"), 19, "yesterday");
  expect_one_line_naming(import_text("bad-time", kHeader + time), "2: column timestamp", "'yesterday' is not a time");
  expect_one_line_naming(import_text("open-quote", kHeader + "rms_norm,\"liger\n"), "2: ", "never closed");
}

TEST(ImportLiger, RowsThatCannotBeRunsAreSkippedWithTheirReasonCounted) {
  std::string nan_row = kSpeedRow, unit_row = kSpeedRow, memory_row = kSpeedRow;
  nan_row.replace(nan_row.find("0.5,0.4,0.6"), 11, "nan,nan,nan");
  nan_row.replace(nan_row.find(",1024,"), 6, ",2048,");
  unit_row.replace(unit_row.find("speed,ms"), 8, "speed,us");
  memory_row.replace(memory_row.find("speed,ms"), 8, "memory,MB");
  fs::path output;
  const CommandResult result =
      import_text("skipped", kHeader + kSpeedRow + nan_row + unit_row + kSpeedRow + memory_row, &output);
  EXPECT_EQ(result.exit_code, kExitFailure) << result.output;
  EXPECT_NE(result.output.find("imported 2 of 5 rows (1 points)"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("skipped 3 rows:"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("1  no measurement (y_value_50 is nan) (line 3)"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("1  metric_name 'speed' in 'us'"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("1  an exact copy of an earlier row (line 5)"), std::string::npos) << result.output;
  const ResultsFile file = ResultsFile::open_read_only(output);
  const std::vector<StoredRun> runs = file.read_runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].device_peak_bytes, 524288u);      // the memory row first: 0.5 MB of 2**20 bytes
  EXPECT_DOUBLE_EQ(runs[1].stats.median_ns, 500000);  // then the point's timing, its current row
  EXPECT_EQ(runs[0].point_id, runs[1].point_id);
}

// --- the pieces ------------------------------------------------------------------------------------

TEST(Csv, QuotedFieldsHoldCommasQuotesAndLineBreaks) {
  const CsvTable table = parse_csv(
      "\xEF\xBB\xBF"
      "a,b,c\r\n1,\"x, \"\"y\"\"\",\"two\nlines\"\r\n\r\n3,,\n");
  EXPECT_EQ(table.header, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0].fields, (std::vector<std::string>{"1", "x, \"y\"", "two\nlines"}));
  EXPECT_EQ(table.rows[0].line, 2u);
  EXPECT_EQ(table.rows[1].fields, (std::vector<std::string>{"3", "", ""}));
  EXPECT_EQ(table.rows[1].line, 5u);  // the quoted line break counts
  EXPECT_EQ(table.column("c"), 2u);
  EXPECT_FALSE(table.column("d"));
}

TEST(Csv, MalformedQuotingIsAnErrorWithItsLine) {
  const auto line_of_error = [](const std::string& text) {
    try {
      parse_csv(text);
    } catch (const CsvError& e) { return e.line(); }
    return std::size_t{0};
  };
  EXPECT_EQ(line_of_error("a,b\n1,\"open\n2,3\n"), 2u);
  EXPECT_EQ(line_of_error("a,b\n1,2\n3,\"x\"y\n"), 3u);
  EXPECT_EQ(line_of_error("a,b\n1,x\"y\n"), 2u);
  EXPECT_EQ(line_of_error(""), 1u);
}

TEST(ImportLiger, ExtraConfigIsJsonOrAPythonDict) {
  EXPECT_EQ(liger_extra_config(R"({"B": 8, "T": 2048})"), Json::parse(R"({"B": 8, "T": 2048})"));
  EXPECT_EQ(liger_extra_config("{'B': 8, 'bias': True, 'act': 'it\\'s', 'q': \"a\", 'T': None}"),
            Json::parse(R"({"B": 8, "bias": true, "act": "it's", "q": "a", "T": null})"));
  EXPECT_EQ(liger_extra_config(""), Json::object());
  EXPECT_EQ(liger_extra_config("null"), Json::object());
  EXPECT_THROW(liger_extra_config("[1, 2]"), std::invalid_argument);
  EXPECT_THROW(liger_extra_config("{B: 8"), std::invalid_argument);
}

TEST(ImportLiger, ShapeSlugKeepsSizesAndTheDtypeUnderKernelindexNames) {
  EXPECT_EQ(liger_shape_slug(kernelsweep_names(Json::parse(R"({"BT": 1024, "H": 4096, "V": 128256, "mode": "forward",
      "dtype": "torch.bfloat16", "bias": false, "weight_hard_loss": 0.5, "ignore_index": -100})"))),
            "hidden4096-tokens1024-vocab128256-bf16");
  EXPECT_EQ(liger_shape_slug(
                kernelsweep_names(Json::parse(R"({"M": 2048, "dtype": "torch.float32", "eps": 1e-06, "N": 512})"))),
            "m2048-n512-fp32");  // slugs are lower case, as the seed's externalId
}

TEST(GpuNames, TheCsvsGpusAsHardware) {
  EXPECT_EQ(
      hardware_of_gpu_name("NVIDIA A100-SXM4-80GB"),
      Json::parse(
          R"({"vendor": "nvidia", "product": "NVIDIA A100", "formFactor": "SXM4-80GB", "architecture": "sm_80"})"));
  EXPECT_EQ(
      hardware_of_gpu_name("NVIDIA H100 80GB HBM3"),
      Json::parse(
          R"({"vendor": "nvidia", "product": "NVIDIA H100", "formFactor": "SXM5-80GB", "architecture": "sm_90"})"));
  EXPECT_EQ(hardware_of_gpu_name("NVIDIA H100 PCIe")["formFactor"], "PCIe-80GB");
  EXPECT_EQ(hardware_of_gpu_name("NVIDIA GeForce RTX 3090")["architecture"], "sm_86");
  EXPECT_EQ(hardware_of_gpu_name("NVIDIA GeForce RTX 4090")["architecture"], "sm_89");
  EXPECT_EQ(hardware_of_gpu_name("NVIDIA B200")["architecture"], "sm_100");
  EXPECT_EQ(hardware_of_gpu_name("NVIDIA H20")["architecture"], "sm_90");
  EXPECT_EQ(hardware_of_gpu_name("AMD Instinct MI300X"),
            Json::parse(R"({"vendor": "amd", "product": "AMD Instinct MI300X", "architecture": "gfx942"})"));
  EXPECT_EQ(hardware_of_gpu_name("Some Accelerator"),
            Json::parse(R"({"vendor": "unknown", "product": "Some Accelerator"})"));
  EXPECT_EQ(gpu_name_without_vendor("NVIDIA A100-SXM4-80GB"), "A100-SXM4-80GB");
}

}  // namespace
}  // namespace ks::testing
