// The examples in docs/*.md are what the program writes and reads. Every fenced block of a page is
// preceded by an HTML comment (invisible once rendered) that says how it is checked:
//
//   <!-- example: sweep -->                a sweep file: `kernelsweep validate` accepts it
//   <!-- example: results-sweep -->        a sweep file that is also run (2 CPU ranks); the h5dump-* and
//                                          h5py-* blocks of the same page show its results file
//   <!-- example: h5dump-commands -->      commands run in the folder of that run: each must succeed
//   <!-- example: h5dump-header -->        `h5dump -H` of that file, string-type lines left out: the same
//                                          groups, datasets, columns, attributes and types, in order
//   <!-- example: h5dump-runs -->          `h5dump -d /runs -c 2` of that file: the same rows (matched by
//                                          point id), values that vary with the run compared by their form
//   <!-- example: h5py -->                 a Python program reading a results file: it parses, and where a
//                                          python3 with h5py exists it runs on that file
//   <!-- example: h5py-output -->          what the page's h5py program prints on that file
//   <!-- example: validate-errors -->      error lines that `kernelsweep validate` prints (the bad files
//                                          are kBadSweeps below)
//   <!-- example: error-form -->           the form those lines follow
//   <!-- example: seed-protocol-canonical --> the canonical text of the seed's protocol, and its digest
//   <!-- example: kernelindex-object -->   an object with the keys and shape of one the program writes
//   <!-- example: document-index -->       lines of a jsonl documents index (\t for a tab): the comment
//                                          line the page's results-sweep wrote, entries of the same form
//   <!-- example: document-commands -->    commands run in the folder of that run (kernelsweep: the
//                                          binary built): each must succeed and print something
//   <!-- example: excerpt PATH -->         text that appears as it is in the file PATH of this repository
//   <!-- example: sh -->                   shell commands: `bash -n` parses them
//   <!-- example: covered by SUITE.NAME --> checked by that test, elsewhere in tests/
//   <!-- not an example: WHY -->           a form or a synopsis, nothing to check
//
// The program is run as a black box (the kernelsweep binary under mpirun, h5dump), so these checks
// do not depend on its internal types.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// --- the blocks ------------------------------------------------------------------------------------

struct Block {
  std::string page;      // docs/NAME.md
  int line = 0;          // of the opening fence
  std::string kind;      // "" when unmarked
  std::string argument;  // what follows the kind in the marker
  std::string text;      // the block's content, each line ending in '\n'
  std::string where() const { return fmt::format("{}:{}", page, line); }
};

std::vector<Block> blocks_of(const fs::path& page) {
  static const std::regex marker(R"re(^\s*<!--\s*example:\s*(\S+)\s*(.*?)\s*-->\s*$)re");
  static const std::regex not_example(R"re(^\s*<!--\s*not an example\b.*-->\s*$)re");
  std::vector<Block> blocks;
  const auto lines = lines_of(read_text(page));
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("```", 0) != 0) continue;
    Block block;
    block.page = "docs/" + page.filename().string();
    block.line = static_cast<int>(i + 1);
    std::size_t previous = i;
    while (previous > 0 && lines[previous - 1].find_first_not_of(" \t") == std::string::npos) --previous;
    std::smatch m;
    if (previous > 0 && std::regex_match(lines[previous - 1], m, marker)) {
      block.kind = m[1];
      block.argument = m[2];
    } else if (previous > 0 && std::regex_match(lines[previous - 1], not_example)) {
      block.kind = "none";
    }
    for (++i; i < lines.size() && lines[i].rfind("```", 0) != 0; ++i) block.text += lines[i] + "\n";
    blocks.push_back(block);
  }
  return blocks;
}

std::vector<Block> all_blocks() {
  std::vector<fs::path> pages;
  for (const auto& entry : fs::directory_iterator(fs::path(KS_SOURCE_DIR) / "docs"))
    if (entry.path().extension() == ".md") pages.push_back(entry.path());
  std::sort(pages.begin(), pages.end());
  std::vector<Block> blocks;
  for (const auto& page : pages)
    for (auto& block : blocks_of(page)) blocks.push_back(std::move(block));
  return blocks;
}

std::vector<Block> blocks_of_kind(const std::string& kind, const std::string& page = "") {
  std::vector<Block> out;
  for (const auto& block : all_blocks())
    if (block.kind == kind && (page.empty() || block.page == page)) out.push_back(block);
  return out;
}

const std::set<std::string> kKinds{"sweep",
                                   "results-sweep",
                                   "h5dump-commands",
                                   "h5dump-header",
                                   "h5dump-runs",
                                   "h5py",
                                   "h5py-output",
                                   "validate-errors",
                                   "error-form",
                                   "seed-protocol-canonical",
                                   "kernelindex-object",
                                   "document-index",
                                   "document-commands",
                                   "excerpt",
                                   "sh",
                                   "covered",
                                   "none"};

// Every TEST(Suite, Name) of the test sources, as "Suite.Name", and every case of the Slurm tests
// (tests/slurm/slurm_test.sh, a `case` branch "name)" or "a | b)"), as "slurm.name".
std::set<std::string> test_names() {
  static const std::regex test(R"re(\bTEST(?:_F)?\(\s*(\w+)\s*,\s*(\w+)\s*\))re");
  static const std::regex slurm_case(R"re((?:^|\n)(\w+(?: \| \w+)*)\)\n)re");
  std::set<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(KS_SOURCE_DIR) / "tests")) {
    if (entry.path().extension() != ".cpp") continue;
    const std::string text = read_text(entry.path());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), test); it != std::sregex_iterator(); ++it)
      names.insert((*it)[1].str() + "." + (*it)[2].str());
  }
  const std::string slurm = read_text(fs::path(KS_SOURCE_DIR) / "tests/slurm/slurm_test.sh");
  for (auto it = std::sregex_iterator(slurm.begin(), slurm.end(), slurm_case); it != std::sregex_iterator(); ++it) {
    std::istringstream alternatives(std::regex_replace((*it)[1].str(), std::regex(" \\| "), " "));
    for (std::string name; alternatives >> name;) names.insert("slurm." + name);
  }
  return names;
}

// A python3 that can import h5py and numpy, if any.
std::optional<std::string> python_with_h5py() {
  for (const char* python : {"python3", "/usr/bin/python3"}) {
    if (run_shell(fmt::format("{} -c 'import h5py, numpy'", python)).exit_code == 0) return std::string(python);
  }
  return std::nullopt;
}

std::optional<std::string> any_python() {
  for (const char* python : {"python3", "/usr/bin/python3"})
    if (run_shell(fmt::format("{} -c 'import ast'", python)).exit_code == 0) return std::string(python);
  return std::nullopt;
}

TEST(DocsExamples, EveryFencedBlockSaysHowItIsChecked) {
  const auto names = test_names();
  const auto blocks = all_blocks();
  ASSERT_FALSE(blocks.empty());
  for (const auto& block : blocks) {
    SCOPED_TRACE(block.where());
    EXPECT_TRUE(kKinds.count(block.kind))
        << (block.kind.empty()
                ? "no <!-- example: KIND --> before this block (tests/unit/docs_test.cpp lists the kinds)"
                : "unknown kind '" + block.kind + "'");
    if (block.kind == "covered") {
      const std::string name = std::regex_replace(block.argument, std::regex(R"re(^by\s+)re"), "");
      EXPECT_TRUE(names.count(name)) << "no test " << name << " in tests/";
    } else if (block.kind == "excerpt") {
      const fs::path path = fs::path(KS_SOURCE_DIR) / block.argument;
      ASSERT_TRUE(fs::exists(path)) << path;
      EXPECT_NE(read_text(path).find(block.text), std::string::npos) << "not a part of " << block.argument << ":\n"
                                                                     << block.text;
    } else if (block.kind == "sh") {
      const auto dir = fresh_directory("docs_sh");
      write_file(dir / "block.sh", block.text);
      const auto r = run_shell("bash -n " + (dir / "block.sh").string());
      EXPECT_EQ(r.exit_code, 0) << r.output;
    } else if (block.kind == "h5py") {
      const auto python = any_python();
      if (!python) continue;
      const auto dir = fresh_directory("docs_python");
      write_file(dir / "block.py", block.text);
      const auto r = run_shell(fmt::format("{} -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' {}", *python,
                                           (dir / "block.py").string()));
      EXPECT_EQ(r.exit_code, 0) << r.output;
    }
  }
}

TEST(DocsExamples, SweepFilesValidate) {
  int count = 0;
  for (const auto& block : all_blocks()) {
    if (block.kind != "sweep" && block.kind != "results-sweep") continue;
    SCOPED_TRACE(block.where());
    const auto dir = fresh_directory("docs_sweep");
    const auto sweep = write_sweep(dir, block.text);
    const auto r = run_shell(fmt::format("{} validate {}", KS_CLI, sweep.string()));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.rfind("ok: ", 0), 0u) << r.output;
    ++count;
  }
  EXPECT_GT(count, 0);
}

// --- error lines -----------------------------------------------------------------------------------

// The files behind docs/sweep-file.md's error lines, by the line's KEY.
const std::map<std::string, std::string> kBadSweeps{
    {"kernels[0].grid.dtype[0]",
     "name: mine\nkernels:\n  - kernel: gemm\n    grid:\n      M: [256]\n      N: [256]\n      dtype: [fp16]\n"},
    {"kernels[0].mode", "name: mine\nkernels:\n  - kernel: distill_cosine_loss\n    mode: [full]\n"},
    {"kernels[0].grid.tokens.mul",
     "name: mine\nkernels:\n  - kernel: distill_cosine_loss\n    implementations: [cpu]\n    modes: [full]\n"
     "    fixed:\n      hidden: 256\n    grid:\n      tokens: {from: 64, to: 128, mul: 1}\n"},
};

TEST(DocsExamples, ErrorLinesAreThoseValidatePrints) {
  const auto forms = blocks_of_kind("error-form");
  ASSERT_EQ(forms.size(), 1u);
  EXPECT_EQ(forms[0].text, "FILE:LINE:COLUMN: KEY: what is wrong\n");
  const std::regex form(R"re(^([^:]+):(\d+):(\d+): (\S+): (.+)$)re");
  const auto examples = blocks_of_kind("validate-errors");
  ASSERT_FALSE(examples.empty());
  for (const auto& block : examples) {
    for (const auto& line : lines_of(block.text)) {
      SCOPED_TRACE(block.where() + ": " + line);
      std::smatch m;
      ASSERT_TRUE(std::regex_match(line, m, form)) << "not of the form FILE:LINE:COLUMN: KEY: what is wrong";
      const auto bad = kBadSweeps.find(m[4]);
      ASSERT_NE(bad, kBadSweeps.end()) << "no file for this line in kBadSweeps";
      const auto dir = fresh_directory("docs_errors");
      fs::create_directories((dir / m[1].str()).parent_path());
      write_file(dir / m[1].str(), bad->second);
      const auto r = run_shell(fmt::format("cd {} && {} validate {}", dir.string(), KS_CLI, m[1].str()));
      EXPECT_EQ(r.exit_code, 2);
      EXPECT_EQ(r.output, line + "\n");
    }
  }
}

// --- the results file --------------------------------------------------------------------------

struct ResultsRun {
  fs::path dir;      // where the sweep ran; the page's relative paths hold there
  std::string file;  // the results file, relative to dir

  // A shell command run in dir.
  CommandResult shell(const std::string& command) const {
    return run_shell(fmt::format("cd {} && {}", dir.string(), command));
  }
  // h5dump OPTIONS of the results file.
  CommandResult h5dump(const std::string& options) const { return shell(fmt::format("h5dump {} {}", options, file)); }
};

// Runs the page's results-sweep on 2 CPU ranks, once per test program (the first test that needs it).
const ResultsRun& results_run(const std::string& page) {
  static std::map<std::string, ResultsRun> runs;
  if (auto it = runs.find(page); it != runs.end()) return it->second;
  const auto sweeps = blocks_of_kind("results-sweep", page);
  if (sweeps.size() != 1) throw std::runtime_error(page + " needs exactly one results-sweep block");
  ResultsRun run;
  // A folder of the test's own: ctest runs the tests of this file side by side.
  run.dir = fresh_directory(fmt::format("docs_results_{}_{}", fs::path(page).stem().string(),
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name()));
  write_file(run.dir / "example.yaml", sweeps[0].text);
  const auto r =
      run.shell(fmt::format("CUDA_VISIBLE_DEVICES= {} -np 2 --oversubscribe {} run example.yaml", KS_MPIEXEC, KS_CLI));
  if (r.exit_code != 0) throw std::runtime_error("the example sweep failed:\n" + r.output);
  std::smatch m;
  if (!std::regex_search(r.output, m, std::regex(R"re(results:\s+(\S+))re")))
    throw std::runtime_error("run did not name its results file:\n" + r.output);
  run.file = m[1];
  return runs[page] = run;
}

// Calls check(block, run) for each block of `kind` (the pages have one at least), `run` the results of
// the sweep of the block's page.
template <class Check> void for_each_block_with_its_run(const std::string& kind, const Check& check) {
  const auto blocks = blocks_of_kind(kind);
  ASSERT_FALSE(blocks.empty()) << "no " << kind << " block";
  for (const auto& block : blocks) {
    SCOPED_TRACE(block.where());
    check(block, results_run(block.page));
  }
}

std::string without_string_type_lines(const std::string& text) {
  std::string out;
  for (const auto& line : lines_of(text))
    if (!std::regex_search(line, std::regex("STRSIZE|STRPAD|CSET|CTYPE"))) out += line + "\n";
  return out;
}

// h5dump -H: the file's name and the datasets' row counts vary; names, types and order do not.
std::string normalised_header(const std::string& text) {
  std::string out = std::regex_replace(text, std::regex(R"re(^HDF5 "[^"]*")re"), "HDF5 \"FILE\"");
  return std::regex_replace(out, std::regex(R"re(SIMPLE \{ \( \d+ \))re"), "SIMPLE { ( N )");
}

TEST(DocsExamples, H5dumpHeaderIsTheResultsFiles) {
  for_each_block_with_its_run("h5dump-header", [](const Block& block, const ResultsRun& run) {
    const auto r = run.h5dump("-H");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(lines_of(block.text).at(0), fmt::format("HDF5 \"{}\" {{", run.file));
    EXPECT_EQ(normalised_header(block.text), normalised_header(without_string_type_lines(r.output)));
  });
}

// The column names of /runs, in order, from an h5dump -H listing.
std::vector<std::string> runs_columns(const std::string& header) {
  const auto start = header.find("DATASET \"runs\"");
  const auto end = header.find("DATASPACE", start);
  std::vector<std::string> columns;
  const std::string part = header.substr(start, end - start);
  static const std::regex column(R"re(\} "(\w+)";|H5T_\w+ "(\w+)";)re");
  for (auto it = std::sregex_iterator(part.begin(), part.end(), column); it != std::sregex_iterator(); ++it)
    columns.push_back((*it)[1].matched ? (*it)[1].str() : (*it)[2].str());
  return columns;
}

// The records of an h5dump -d /runs listing: one vector of value lines per row.
std::vector<std::vector<std::string>> runs_records(const std::string& listing) {
  std::vector<std::vector<std::string>> records;
  bool inside = false;
  for (const auto& line : lines_of(listing)) {
    if (std::regex_match(line, std::regex(R"re(\s*\(\d+\): \{)re"))) {
      records.emplace_back();
      inside = true;
    } else if (inside && std::regex_match(line, std::regex(R"re(\s*\},?)re"))) {
      inside = false;
    } else if (inside) {
      records.back().push_back(std::regex_replace(line, std::regex(R"re(^\s+|,$)re"), ""));
    }
  }
  return records;
}

// How a /runs value is compared: the same text, or the same form.
bool same_value(const std::string& column, const std::string& shown, const std::string& made) {
  static const std::set<std::string> same{"point_id",       "kernel",   "implementation", "mode",  "params",
                                          "status",         "gpu_uuid", "flops",          "bytes", "device_peak_bytes",
                                          "workload_digest"};
  if (same.count(column)) return shown == made;
  const auto form = [&](const std::string& pattern) {
    return std::regex_match(shown, std::regex(pattern)) && std::regex_match(made, std::regex(pattern));
  };
  if (column.size() > 7 && column.compare(column.size() - 7, 7, "_digest") == 0)
    return form(R"re("sha256:[0-9a-f]{64}")re");
  if (column == "started_at" || column == "ended_at") return form(R"re("\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")re");
  if (column == "message" || column == "host" || column == "flags") return form(R"re(".*")re");
  return form(R"re(-?[0-9.]+(e[+-]\d+)?|nan|inf)re");
}

TEST(DocsExamples, H5dumpRunsAreTheResultsFiles) {
  for_each_block_with_its_run("h5dump-runs", [](const Block& block, const ResultsRun& run) {
    const auto header = run.h5dump("-H");
    const auto made = run.h5dump("-d /runs -c 2");
    ASSERT_EQ(made.exit_code, 0) << made.output;
    const auto columns = runs_columns(header.output);
    const auto shown_records = runs_records(block.text);
    const auto made_records = runs_records(made.output);
    ASSERT_EQ(shown_records.size(), made_records.size());
    // The text around the values, (0): { ... } included, is h5dump's own.
    const auto frame = [](const std::string& text) {
      std::string out;
      for (const auto& line : lines_of(text.substr(text.find("   SUBSET {"))))
        if (!std::regex_match(line, std::regex(R"re(\s+("|-?[0-9]|nan|inf).*)re"))) out += line + "\n";
      return out;
    };
    EXPECT_EQ(frame(block.text), frame(made.output));
    for (const auto& shown : shown_records) {
      ASSERT_EQ(shown.size(), columns.size()) << "a row of the page has not one value per column";
      const auto match = std::find_if(made_records.begin(), made_records.end(),
                                      [&](const auto& record) { return record.at(0) == shown.at(0); });
      ASSERT_NE(match, made_records.end()) << "no row with point_id " << shown[0] << " in the file";
      for (std::size_t c = 0; c < columns.size(); ++c)
        EXPECT_TRUE(same_value(columns[c], shown[c], match->at(c)))
            << columns[c] << ": the page shows " << shown[c] << ", the file holds " << match->at(c);
    }
  });
}

// The commands of a block: its lines without their trailing comments, empty ones left out.
std::vector<std::string> commands_in(const std::string& text) {
  std::vector<std::string> commands;
  for (const auto& line : lines_of(text)) {
    std::string command = std::regex_replace(line, std::regex(R"re(\s+#.*$)re"), "");
    if (!command.empty()) commands.push_back(std::move(command));
  }
  return commands;
}

TEST(DocsExamples, H5dumpCommandsRunOnTheResultsFile) {
  for_each_block_with_its_run("h5dump-commands", [](const Block& block, const ResultsRun& run) {
    for (const std::string& command : commands_in(block.text)) {
      SCOPED_TRACE(command);
      EXPECT_NE(command.find(run.file), std::string::npos) << "the command does not read " << run.file;
      const auto r = run.shell(command);
      EXPECT_EQ(r.exit_code, 0) << r.output;
    }
  });
}

TEST(DocsExamples, DocumentIndexHasTheFormOfTheIndexWritten) {
  const std::regex entry(R"re([0-9a-f]{64}\t[a-z0-9-]+\tkernelindex-\d{4}\.jsonl(\.gz|\.zst)?\t\d+\t\d+\t\d+\t\d+)re");
  for_each_block_with_its_run("document-index", [&entry](const Block& block, const ResultsRun& run) {
    const auto written = lines_of(read_text(run.dir / "out" / "kernelindex" / "kernelindex.index"));
    const auto shown = lines_of(std::regex_replace(block.text, std::regex(R"re(\\t)re"), "\t"));
    ASSERT_GE(written.size(), 2u);
    ASSERT_GE(shown.size(), 2u);
    EXPECT_EQ(shown.front(), written.front());
    for (std::size_t i = 1; i < written.size(); ++i) EXPECT_TRUE(std::regex_match(written[i], entry)) << written[i];
    for (std::size_t i = 1; i < shown.size(); ++i) EXPECT_TRUE(std::regex_match(shown[i], entry)) << shown[i];
  });
}

TEST(DocsExamples, DocumentCommandsRunOnTheDocumentsWritten) {
  for_each_block_with_its_run("document-commands", [](const Block& block, const ResultsRun& run) {
    for (const std::string& command : commands_in(block.text)) {
      SCOPED_TRACE(command);
      const std::string script =
          std::regex_replace(command, std::regex(R"re(\bkernelsweep )re"), KS_CLI + std::string(" "));
      write_file(run.dir / "command.sh", script + "\n");
      const auto r = run.shell("bash -o pipefail command.sh");
      EXPECT_EQ(r.exit_code, 0) << r.output;
      EXPECT_FALSE(r.output.empty());
    }
  });
}

// What Python's print() shows for a parameter object read with json.loads: {'K': 256, 'dtype': 'fp32'}.
std::string python_repr(const Json& value) {
  if (value.is_object()) {
    std::string out = "{";
    for (const auto& [key, item] : value.items())
      out += (out.size() > 1 ? ", '" : "'") + key + "': " + python_repr(item);
    return out + "}";
  }
  if (value.is_string()) return "'" + value.get<std::string>() + "'";
  if (value.is_boolean()) return value.get<bool>() ? "True" : "False";
  return value.dump();
}

// Checks lines printed by the page's h5py program against the results file, read with h5dump.
void expect_h5py_output(const std::string& output, const ResultsRun& run) {
  const auto attribute = [&](const std::string& name) {
    const auto r = run.h5dump("-a /" + name);
    std::smatch m;
    std::regex_search(r.output, m, std::regex(R"re(\(0\): "?([^"\n]*)"?)re"));
    return m[1].str();
  };
  const auto made = run.h5dump("-d /runs");
  std::map<std::string, std::pair<std::string, std::string>> rows;  // point id -> status, params
  for (const auto& record : runs_records(made.output)) {
    const std::string params = record.at(4).substr(1, record.at(4).size() - 2);
    rows[record.at(0).substr(1, 64)] = {record.at(5).substr(1, record.at(5).size() - 2), params};
  }
  const auto lines = lines_of(output);
  ASSERT_EQ(lines.size(), 2 * rows.size() + 2) << output;  // a run's line, then its quantiles'
  std::smatch m;
  ASSERT_TRUE(std::regex_match(lines.front(), m, std::regex(R"re((\S+) (\d+) (\d{4}-\d\d-\d\dT[0-9:.]+Z))re")))
      << lines.front();
  EXPECT_EQ(m[1], attribute("sweep_name"));
  EXPECT_EQ(m[2], attribute("plan_size"));
  for (std::size_t i = 1; i + 1 < lines.size(); i += 2) {
    ASSERT_TRUE(
        std::regex_match(lines[i], m, std::regex(R"re(([0-9a-f]{64}) (\w+) (\{.*\}) ([0-9.e+]+) ([0-9.e+]+))re")))
        << lines[i];
    const auto row = rows.find(m[1]);
    ASSERT_NE(row, rows.end()) << "no point " << m[1] << " in the file";
    EXPECT_EQ(m[2], row->second.first);
    EXPECT_EQ(m[3], python_repr(Json::parse(row->second.second)));
    const std::string median = m[4];
    // The protocol's quantiles, in its order: the median first, as /runs holds it.
    ASSERT_TRUE(std::regex_match(lines[i + 1], m,
                                 std::regex(R"re(   \{0\.5: ([0-9.e+]+), 0\.2: [0-9.e+]+, 0\.8: [0-9.e+]+\})re")))
        << lines[i + 1];
    EXPECT_EQ(m[1], median);
  }
  EXPECT_EQ(lines.back(), "1 protocol(s)");
}

TEST(DocsExamples, H5pyProgramsPrintWhatThePageShows) {
  for_each_block_with_its_run("h5py-output",
                              [](const Block& block, const ResultsRun& run) { expect_h5py_output(block.text, run); });
  const auto python = python_with_h5py();
  if (!python) GTEST_SKIP() << "no python3 with h5py: the h5py programs were only parsed";
  for (const auto& block : blocks_of_kind("h5py")) {
    SCOPED_TRACE(block.where());
    // A page without an example sweep of its own reads that of docs/hdf5-layout.md.
    const bool own = !blocks_of_kind("results-sweep", block.page).empty();
    const auto& run = results_run(own ? block.page : "docs/hdf5-layout.md");
    const std::string program =
        own ? block.text : std::regex_replace(block.text, std::regex(R"re("[^"]+\.h5")re"), "\"" + run.file + "\"");
    write_file(run.dir / "block.py", program);
    const auto r = run.shell(*python + " block.py");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    if (!blocks_of_kind("h5py-output", block.page).empty()) expect_h5py_output(r.output, run);
  }
}

// --- kernelindex -------------------------------------------------------------------------------

TEST(DocsExamples, SeedProtocolLineIsItsCanonicalFormAndDigest) {
  const auto lines = blocks_of_kind("seed-protocol-canonical");
  ASSERT_EQ(lines.size(), 1u);
  const std::string seed_text = read_text(KS_SEED_DOCUMENT);
  const Json seed = Json::parse(seed_text.substr(seed_text.find('{')));
  const Json& protocol = seed.at("protocol");
  // The seed's protocol holds strings only: nlohmann's dump() (keys sorted, no whitespace, UTF-8 as is)
  // is its canonical JSON.
  const Json content = {
      {"apiVersion", protocol.at("apiVersion")}, {"kind", protocol.at("kind")}, {"spec", protocol.at("spec")}};
  EXPECT_EQ(lines[0].text, content.dump() + "\n");
  const auto dir = fresh_directory("docs_seed");
  write_file(dir / "line.txt", content.dump());
  const auto r = run_shell("sha256sum " + (dir / "line.txt").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string digest = r.output.substr(0, 64);
  EXPECT_EQ("sha256:" + digest, seed.at("run").at("spec").at("protocolDigest").get<std::string>());
  EXPECT_NE(read_text(fs::path(KS_SOURCE_DIR) / lines[0].page).find("Its SHA-256 is `" + digest + "`"),
            std::string::npos);
}

const char* json_type(const Json& value) {
  if (value.is_number_float()) return "float";
  if (value.is_number()) return "integer";
  return value.type_name();
}

// Paths whose values a page shows as they are: everything else varies with the run, the machine or
// the point, and is compared by presence and type.
bool same_value_path(const std::string& path) {
  static const std::set<std::string> same{"run.spec.status",
                                          "run.spec.timing.primaryStatistic",
                                          "run.spec.sourceNative.source",
                                          "run.spec.sourceNative.status",
                                          "run.spec.sourceNative.benchmark",
                                          "protocol.spec.harness.name",
                                          "protocol.spec.comparability.family",
                                          "protocol.spec.comparability.notes",
                                          "protocol.spec.measurement.name",
                                          "protocol.spec.measurement.primaryStatistic",
                                          "protocol.spec.measurement.quantile_method",
                                          "protocol.spec.measurement.quantiles",
                                          "protocol.spec.measurement.max_repeat",
                                          "protocol.spec.measurement.warmup_ms",
                                          "protocol.spec.measurement.rep_ms",
                                          "workload.spec.kernel",
                                          "implementation.spec.kernel"};
  const auto ends_with = [&](const std::string& tail) {
    return path.size() >= tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0;
  };
  return same.count(path) || ends_with(".apiVersion") || ends_with(".kind") || ends_with("].metric") ||
         ends_with("].statistic") || ends_with("].unit");
}

// What a document made on a CPU rank, or for a cpu implementation, has not (or has more), beside a
// GPU example: the facts docs/kernelindex.md's tables list as GPU-only or CPU-only.
struct Allowance {
  std::set<std::string> missing, extra;
  std::set<std::string> null;  // a value the page shows that a CPU rank writes as null
};

Allowance allowance_for(const Json& made) {
  Allowance allow;
  if (made.at("environment").at("spec").at("hardware").value("vendor", "") != "nvidia") {
    for (const char* key : {"formFactor", "memoryBytes", "multiprocessors"})
      allow.missing.insert(std::string("environment.spec.hardware.") + key);
    for (const char* key : {"driver", "cudaDriver", "cudaRuntime", "cublas", "nccl"})
      allow.missing.insert(std::string("environment.spec.software.") + key);
    allow.missing.insert("run.spec.sourceNative.gpuUuid");
    allow.extra.insert("environment.spec.hardware.cores");
    // What NVML reads around a GPU point, and the SM clock of its samples.
    for (const char* measurement :
         {"sm_clock/start", "sm_clock/end", "memory_clock/start", "memory_clock/end", "power/start", "power/end",
          "temperature/start", "temperature/end", "sm_clock/min_over_samples", "sm_clock/median_over_samples"})
      allow.missing.insert(std::string("run.spec.measurements[") + measurement + "]");
    for (const char* metric :
         {"sm_clock_mhz_start", "sm_clock_mhz_end", "memory_clock_mhz_start", "memory_clock_mhz_end", "power_w_start",
          "power_w_end", "temperature_c_start", "temperature_c_end", "throttle_reasons_start", "throttle_reasons_end",
          "sample_sm_clock_min_mhz", "sample_sm_clock_median_mhz", "samples_dropped", "noise_goal_met"})
      allow.missing.insert(std::string("run.spec.sourceNative.metrics.") + metric);
    allow.missing.insert("run.spec.sourceNative.throttleReasons");
    // A CPU rank's calibration is its CPU's: no datasheet, fp32 and fp64 alone, no CPU beside it, and
    // the count of ranks that measured it at once.
    allow.missing.insert("environment.metadata.calibration.cpu");
    allow.null.insert("environment.metadata.calibration.datasheet");
    for (const char* dtype : {"tf32", "bf16", "fp16", "fp8"})
      allow.missing.insert(std::string("environment.metadata.calibration.tflops.") + dtype);
    allow.extra.insert("environment.metadata.calibration.measured_beside");
  }
  // The check's verdict, where the point was checked (the page's was; the test's run is not); the
  // speed-of-light flags, where the point has some (the test's small point fits in the cache).
  allow.missing.insert("run.spec.message");
  allow.extra.insert("run.spec.sourceNative.flags");
  if (made.at("implementation").at("spec").at("backend") != "cuda") {
    for (const char* key : {"cudaCompiler", "cudaArchitectures", "libraries"})
      allow.missing.insert(std::string("implementation.spec.build.") + key);
    for (const char* key : {"cudaRuntime", "cublas", "nccl"})
      allow.missing.insert(std::string("implementation.spec.build.libraries.") + key);
  }
  // Peak device memory is reported by implementations that allocate on a device.
  allow.missing.insert("run.spec.measurements[device_memory/peak]");
  allow.missing.insert("run.spec.sourceNative.metrics.device_peak_bytes");
  return allow;
}

void compare_shape(const Json& shown, const Json& made, const std::string& path, const Allowance& allow,
                   std::vector<std::string>& problems) {
  if (made.is_null() && allow.null.count(path)) return;
  if (std::string(json_type(shown)) != json_type(made)) {
    problems.push_back(
        fmt::format("{}: the page shows a {}, the program writes a {}", path, json_type(shown), json_type(made)));
    return;
  }
  const auto child = [&](const std::string& key) { return path.empty() ? key : path + "." + key; };
  if (shown.is_object()) {
    for (const auto& [key, value] : shown.items()) {
      if (made.contains(key)) compare_shape(value, made.at(key), child(key), allow, problems);
      else if (!allow.missing.count(child(key)))
        problems.push_back(child(key) + ": on the page, not in the document written");
    }
    for (const auto& [key, value] : made.items())
      if (!shown.contains(key) && !allow.extra.count(child(key)))
        problems.push_back(child(key) + ": in the document written, not on the page");
  } else if (shown.is_array() && !shown.empty() && shown[0].is_object() && shown[0].contains("metric")) {
    // measurements: matched by metric and statistic
    const auto key = [](const Json& m) { return m.value("metric", "") + "/" + m.value("statistic", ""); };
    std::map<std::string, Json> made_by_key;
    for (const auto& m : made) made_by_key[key(m)] = m;
    for (const auto& m : shown) {
      const std::string at = path + "[" + key(m) + "]";
      if (made_by_key.count(key(m))) compare_shape(m, made_by_key[key(m)], at, allow, problems);
      else if (!allow.missing.count(at)) problems.push_back(at + ": on the page, not in the document written");
      made_by_key.erase(key(m));
    }
    for (const auto& [k, m] : made_by_key)
      problems.push_back(path + "[" + k + "]: in the document written, not on the page");
  } else if (same_value_path(path) && shown != made) {
    problems.push_back(fmt::format("{}: the page shows {}, the program writes {}", path, shown.dump(), made.dump()));
  }
}

TEST(DocsExamples, KernelindexExampleHasTheShapeOfAWrittenDocument) {
  const auto examples = blocks_of_kind("kernelindex-object");
  ASSERT_FALSE(examples.empty());
  // The example's point, small: the cpu implementation runs anywhere, fused where a GPU is.
  const auto dir = fresh_directory("docs_kernelindex");
  write_sweep(dir,
              "name: documents\n"
              "kernels:\n"
              "  - kernel: distill_cosine_loss\n"
              "    implementations: [cpu, fused]\n"
              "    modes: [full]\n"
              "    fixed: {tokens: 32, hidden: 64, vocab: 512, chunk_size: 16, dtype: bf16}\n"
              "    include: [{}]\n");
  const auto r = run_shell(fmt::format("cd {} && {} -np 1 {} run sweep.yaml --output-dir out --check none",
                                       dir.string(), KS_MPIEXEC, KS_CLI));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::map<std::string, Json> made;  // implementation -> object, passed runs only
  for (const auto& entry : fs::directory_iterator(dir / "out" / "kernelindex")) {
    const Json object = Json::parse(read_text(entry.path()));
    if (object.at("run").at("spec").at("status") == "passed")
      made[object.at("implementation").at("spec").at("implementation")] = object;
  }
  ASSERT_TRUE(made.count("cpu")) << r.output;
  const Json& written = made.count("fused") ? made["fused"] : made["cpu"];
  for (const auto& block : examples) {
    SCOPED_TRACE(block.where());
    const Json shown = Json::parse(block.text);
    std::vector<std::string> problems;
    compare_shape(shown, written, "", allowance_for(written), problems);
    EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems) << "\nwritten:\n" << written.dump(2);
  }
}

}  // namespace
}  // namespace ks::testing
