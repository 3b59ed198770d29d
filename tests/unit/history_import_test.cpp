// Liger-Kernel's benchmark CSVs collected over days as a history: the real CSV (tests/data/liger/)
// cut to two kernels, written again for each of six days with a run-to-run wobble of a few tenths
// of a percent, Liger's rms_norm made 20% slower from day 3 on, each day imported with
// `import liger --label date=...`, and `kernelsweep history` over the folder of imports.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernelindex/document_reader.h"
#include "report/csv.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const fs::path kLigerTable = fs::path(KS_SOURCE_DIR) / "tests/data/liger/liger_all_benchmark_data.csv";
constexpr int kImportedDays = 6, kSlowerFrom = 3;

std::string quoted_csv_record(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    std::string quoted = fields[i];
    for (std::size_t at = 0; (at = quoted.find('"', at)) != std::string::npos; at += 2) quoted.insert(at, "\"");
    line += (i ? ",\"" : "\"") + quoted + "\"";
  }
  return line + "\n";
}

// The CSV of one day: the rows of rms_norm and cross_entropy, their figures times the day's wobble,
// and Liger's rms_norm from day kSlowerFrom on 20% slower.
std::string day_csv(const CsvTable& table, int day) {
  const std::size_t kernel = *table.column("kernel_name"), provider = *table.column("kernel_provider");
  const double wobble = 1 + 0.003 * ((day * 7) % 5 - 2);
  std::string text = quoted_csv_record(table.header);
  for (const CsvRecord& row : table.rows) {
    const std::string& name = row.fields[kernel];
    if (name != "rms_norm" && name != "cross_entropy") continue;
    std::vector<std::string> fields = row.fields;
    const bool slower = name == "rms_norm" && fields[provider] == "liger" && day >= kSlowerFrom;
    for (const char* figure : {"y_value_20", "y_value_50", "y_value_80"}) {
      std::string& value = fields[*table.column(figure)];
      value = fmt::format("{:.9g}", std::stod(value) * wobble * (slower ? 1.2 : 1.0));
    }
    text += quoted_csv_record(fields);
  }
  return text;
}

TEST(HistoryImports, LigerCsvsOfSeveralDaysShowTheImplementationThatGotSlower) {
  const fs::path dir = fresh_directory("history_liger");
  const CsvTable table = parse_csv(read_text(kLigerTable));
  for (int day = 0; day < kImportedDays; ++day) {
    const fs::path csv = dir / fmt::format("day{}.csv", day);
    write_file(csv, day_csv(table, day));
    const CommandResult imported =
        run_shell(fmt::format("{} import liger {} -o {} --label date=2025-07-0{} --label liger=0.5.{}", KS_CLI,
                              csv.string(), (dir / "imports" / fmt::format("day{}.h5", day)).string(), day + 1, day));
    ASSERT_EQ(imported.exit_code, 0) << imported.output;
  }
  // Every run document carries the import's labels beside Liger's own.
  std::size_t documents = 0;
  for_each_document(dir / "imports" / "kernelindex", {}, [&](std::string_view line) {
    const Json labels = Json::parse(line).at("run").at("metadata").at("labels");
    EXPECT_TRUE(labels.contains("date") && labels.contains("liger") && labels.contains("liger_version")) << labels;
    ++documents;
  });
  EXPECT_GT(documents, 0u);

  const CommandOutput run =
      run_command(fmt::format("{} history {} --order label:date --format json", KS_CLI, (dir / "imports").string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Json out = Json::parse(run.out);
  ASSERT_EQ(out.at("runs").size(), static_cast<std::size_t>(kImportedDays));
  EXPECT_EQ(out.at("runs")[kSlowerFrom].at("labels"), (Json{{"date", "2025-07-04"}, {"liger", "0.5.3"}}));
  std::size_t slower = 0, steady = 0;
  for (const Json& series : out.at("series")) {
    EXPECT_EQ(series.at("runs_seen"), kImportedDays) << series.dump();
    EXPECT_FALSE(series.at("device").get<std::string>().empty()) << series.dump();
    if (series.at("kernel") == "rms_norm" && series.at("implementation") == "liger") {
      ++slower;
      ASSERT_EQ(series.at("steps").size(), 1u) << series.dump();
      const Json& step = series.at("steps")[0];
      EXPECT_EQ(step.at("run"), kSlowerFrom);
      EXPECT_EQ(step.at("labels").at("date"), "2025-07-04");
      EXPECT_NEAR(step.at("change_pct").get<double>(), 20.0, 1.0) << series.dump();
      EXPECT_EQ(series.at("state"), "slower");
    } else {
      ++steady;
      EXPECT_TRUE(series.at("steps").empty()) << series.dump();
      EXPECT_EQ(series.at("state"), "steady");
    }
  }
  EXPECT_EQ(slower, 18u);  // Liger's rms_norm: three timed passes, six shapes
  EXPECT_GT(steady, 0u);

  const CommandOutput gated =
      run_command(fmt::format("{} history {} --order label:date --fail-on-step", KS_CLI, (dir / "imports").string()));
  EXPECT_EQ(gated.exit_code, 1);
  EXPECT_NE(gated.err.find("18 points are slower since a step of more than 5% (--fail-on-step): rms_norm liger"),
            std::string::npos)
      << gated.err;
}

}  // namespace
}  // namespace ks::testing
