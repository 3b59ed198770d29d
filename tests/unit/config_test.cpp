// The sweep-file parser: good files become the SweepSpec they say; every bad file under
// tests/data/config/bad/ fails with the file, line, column and key its first line expects.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/parse.h"
#include "kernels/kernel.h"
#include "support/cli_runner.h"
#include "support/kernels.h"

namespace ks {
namespace {

namespace fs = std::filesystem;

using testing::builtin_registry;
using testing::read_text;

std::string source_path(const std::string& relative) { return std::string(KS_SOURCE_DIR) + "/" + relative; }

SweepSpec parse(const std::string& text) { return parse_sweep_text(text, "inline.yaml", builtin_registry()); }

// The first kernel block of the sweep file `text`.
KernelBlock first_block(const std::string& text) { return parse(text).kernels.at(0); }

// The error a text gives; fails the test when it parses.
SweepFileError parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const SweepFileError& error) { return error; }
  ADD_FAILURE() << "parsed without error:\n" << text;
  return SweepFileError({}, "", "");
}

AxisValues ints(std::initializer_list<std::int64_t> values) {
  AxisValues out;
  for (auto v : values) out.emplace_back(v);
  return out;
}

const Axis& axis(const KernelBlock& block, const std::string& name) {
  for (const auto& a : block.grid)
    if (a.name == name) return a;
  throw std::runtime_error("no axis " + name);
}

// --- good files ---------------------------------------------------------------------------------

TEST(ConfigParse, FullFileGivesEveryField) {
  const std::string path = source_path("tests/data/config/good/full.yaml");
  const SweepSpec spec = load_sweep_file(path, builtin_registry());

  EXPECT_EQ(spec.name, "full-example");
  EXPECT_EQ(spec.source_path, path);
  EXPECT_EQ(spec.source_text, read_text(path));

  EXPECT_EQ(spec.protocol.name, "do_bench");
  EXPECT_EQ(spec.protocol.warmup_ms, 10);
  EXPECT_EQ(spec.protocol.rep_ms, 50.5);
  EXPECT_EQ(spec.protocol.max_repeat, 200);
  ASSERT_TRUE(spec.protocol.flush_bytes.has_value());
  EXPECT_EQ(*spec.protocol.flush_bytes, 0);
  EXPECT_EQ(spec.protocol.quantiles, (std::vector<double>{0.5, 0.1, 0.9}));

  ASSERT_EQ(spec.kernels.size(), 2u);
  const KernelBlock& gemm = spec.kernels[0];
  EXPECT_EQ(gemm.kernel, "gemm");
  EXPECT_EQ(gemm.implementations, (std::vector<std::string>{"cublaslt", "cpu"}));  // file order
  EXPECT_EQ(gemm.modes, (std::vector<std::string>{"forward"}));
  EXPECT_EQ(gemm.timeout_s, 30);
  EXPECT_EQ(gemm.where.line, 13);
  EXPECT_EQ(gemm.where.column, 5);
  ASSERT_EQ(gemm.grid.size(), 3u);
  EXPECT_EQ(gemm.grid[0].name, "M");  // file order
  EXPECT_EQ(gemm.grid[1].name, "N");
  EXPECT_EQ(gemm.grid[2].name, "dtype");
  EXPECT_EQ(gemm.grid[0].values, ints({256, 512, 1024}));
  EXPECT_EQ(gemm.grid[1].values, ints({256, 512, 1024}));  // {from: 256, to: 1024, mul: 2}
  EXPECT_EQ(gemm.grid[2].values, (AxisValues{"fp32", "bf16"}));
  EXPECT_EQ(gemm.grid[1].where.line, 19);
  EXPECT_EQ(gemm.grid[1].where.column, 7);
  EXPECT_EQ(gemm.fixed, (Json{{"K", 256}}));
  EXPECT_EQ(gemm.zip, (std::vector<std::vector<std::string>>{{"M", "N"}}));
  ASSERT_EQ(gemm.include.size(), 1u);
  EXPECT_EQ(gemm.include[0], (Json{{"M", 100}, {"N", 100}, {"K", 100}, {"dtype", "fp32"}}));
  ASSERT_EQ(gemm.exclude.size(), 2u);
  EXPECT_EQ(gemm.exclude[0], (Json{{"dtype", "bf16"}, {"M", Json::array({256, 512})}}));
  EXPECT_EQ(gemm.exclude[1], (Json{{"implementation", "cublaslt"}, {"M", 256}}));

  const KernelBlock& distill = spec.kernels[1];
  EXPECT_EQ(distill.kernel, "distill_cosine_loss");
  EXPECT_EQ(distill.modes, (std::vector<std::string>{"backward", "forward"}));
  EXPECT_EQ(axis(distill, "tokens").values, ints({64, 96, 128}));  // {from: 64, to: 128, step: 32}
  EXPECT_EQ(axis(distill, "chunk_size").values, (AxisValues{"auto", 32}));
  EXPECT_EQ(axis(distill, "bias").values, (AxisValues{false, true}));
  const AxisValues& temperature = axis(distill, "temperature").values;
  ASSERT_EQ(temperature.size(), 3u);  // {from: 0.5, to: 2, mul: 2}: numbers, 2 included
  EXPECT_TRUE(temperature[0].is_number_float());
  EXPECT_EQ(temperature[0].get<double>(), 0.5);
  EXPECT_EQ(temperature[1].get<double>(), 1.0);
  EXPECT_EQ(temperature[2].get<double>(), 2.0);
  // A number parameter given an integer holds a double; a quoted string is a string.
  ASSERT_TRUE(distill.fixed.contains("beta"));
  EXPECT_TRUE(distill.fixed["beta"].is_number_float());
  EXPECT_EQ(distill.fixed["beta"].get<double>(), 1.0);
  EXPECT_EQ(distill.fixed["dtype"], "fp32");
  EXPECT_EQ(distill.fixed["ignore_index"], -1);
  EXPECT_EQ(distill.exclude[0], (Json{{"mode", "backward"}, {"bias", true}}));

  EXPECT_EQ(spec.output.directory, "out/full");
  EXPECT_EQ(spec.output.results_file, "everything.h5");
  EXPECT_EQ(spec.output.kernelindex_format, "jsonl");
}

// Found by fuzzing (tests/fuzz/corpus/repro_yaml_cpp_endless_documents.yaml): on this text yaml-cpp's
// parser reports empty documents without end, and YAML::LoadAll grew until memory ran out.
TEST(ConfigParse, ATextOnWhichYamlCppFindsDocumentsWithoutEndIsRefused) {
  try {
    parse("    grid:\n  ,   dtype: {from: 1, to: 2, step: 1}\n");
    FAIL() << "parsed";
  } catch (const SweepFileError& error) {
    EXPECT_NE(std::string(error.what()).find("a sweep file holds one YAML document"), std::string::npos)
        << error.what();
  }
}

TEST(ConfigParse, OmittedKeysTakeTheirDefaults) {
  const SweepSpec spec = parse("name: minimal\nkernels:\n  - kernel: distill_cosine_loss\n    grid: {tokens: [64]}\n");
  const ProtocolSpec defaults;
  EXPECT_EQ(spec.protocol.name, "do_bench");
  EXPECT_EQ(spec.protocol.warmup_ms, defaults.warmup_ms);
  EXPECT_EQ(spec.protocol.rep_ms, defaults.rep_ms);
  EXPECT_EQ(spec.protocol.max_repeat, defaults.max_repeat);
  EXPECT_FALSE(spec.protocol.flush_bytes.has_value());
  EXPECT_EQ(spec.protocol.quantiles, defaults.quantiles);

  const KernelSpec& kernel = *builtin_registry().find("distill_cosine_loss");
  const KernelBlock& block = spec.kernels.at(0);
  std::vector<std::string> all_implementations;
  for (const auto& implementation : kernel.implementations) all_implementations.push_back(implementation.name);
  EXPECT_EQ(block.implementations, all_implementations);
  EXPECT_EQ(block.modes, kernel.modes);
  EXPECT_EQ(block.timeout_s, KernelBlock{}.timeout_s);
  EXPECT_TRUE(block.fixed.empty());
  EXPECT_TRUE(block.zip.empty());
  EXPECT_TRUE(block.include.empty());
  EXPECT_TRUE(block.exclude.empty());

  EXPECT_EQ(spec.output.directory, "results");
  EXPECT_EQ(spec.output.results_file, "minimal.h5");
  EXPECT_EQ(spec.output.kernelindex_format, "auto");
  EXPECT_EQ(spec.output.kernelindex_compression, "none");
  EXPECT_EQ(spec.output.kernelindex_json_max_points, 10'000u);
  EXPECT_EQ(spec.output.kernelindex_shard_mb, 1024u);
  EXPECT_EQ(spec.source_path, "inline.yaml");
}

TEST(ConfigParse, IncludeAloneGivesPoints) {
  const KernelBlock block = first_block(
      "name: only-include\nkernels:\n  - kernel: gemm\n    fixed: {K: 64}\n"
      "    include:\n      - {M: 8, N: 16}\n      - {}\n");
  EXPECT_TRUE(block.grid.empty());
  ASSERT_EQ(block.include.size(), 2u);
  EXPECT_EQ(block.include[0], (Json{{"M", 8}, {"N", 16}}));
  EXPECT_EQ(block.include[1], Json::object());  // every parameter from fixed, then defaults
  EXPECT_EQ(block.fixed, (Json{{"K", 64}}));
}

TEST(ConfigParse, RangesExpandInclusively) {
  const KernelBlock block = first_block(
      "name: ranges\nkernels:\n  - kernel: distill_cosine_loss\n    grid:\n"
      "      tokens: {from: 1000, to: 5000, mul: 2}\n"  // stops before passing `to`
      "      vocab: {from: 7, to: 7, step: 3}\n"        // from == to: one value
      "      hidden: {from: 2, to: 12, step: 4}\n"      // lands short of `to`
      "      beta: {from: 0, to: 0.3, step: 0.1}\n");   // 0.1 steps do not add up to 0.3 exactly
  EXPECT_EQ(axis(block, "tokens").values, ints({1000, 2000, 4000}));
  EXPECT_EQ(axis(block, "vocab").values, ints({7}));
  EXPECT_EQ(axis(block, "hidden").values, ints({2, 6, 10}));
  const AxisValues& beta = axis(block, "beta").values;
  ASSERT_EQ(beta.size(), 4u);
  for (std::size_t i = 0; i < beta.size(); ++i) {
    EXPECT_TRUE(beta[i].is_number_float());
    EXPECT_DOUBLE_EQ(beta[i].get<double>(), 0.1 * static_cast<double>(i));
  }
}

TEST(ConfigParse, IntegersTakeBinarySizeSuffixes) {
  const KernelBlock block = first_block(
      "name: sizes\nkernels:\n  - kernel: all_reduce\n    grid:\n"
      "      bytes: {from: 512, to: 2K, mul: 2}\n"
      "      group_size: [1, 1K]\n");
  EXPECT_EQ(axis(block, "bytes").values, ints({512, 1024, 2048}));
  EXPECT_EQ(axis(block, "group_size").values, ints({1, 1024}));
  const KernelBlock big =
      first_block("name: big\nkernels:\n  - kernel: all_reduce\n    grid:\n      bytes: [8G, 1T]\n");
  EXPECT_EQ(axis(big, "bytes").values, ints({std::int64_t{8} << 30, std::int64_t{1} << 40}));
  EXPECT_STREQ(parse_error("name: x\nkernels:\n  - kernel: all_reduce\n    grid:\n      bytes: [9999999T]\n").what(),
               "inline.yaml:5:15: kernels[0].grid.bytes[0]: integer 9999999T is out of range");
  EXPECT_NE(std::string(parse_error("name: x\nkernels:\n  - kernel: all_reduce\n    grid:\n      bytes: [8X]\n").what())
                .find("the string \"8X\""),
            std::string::npos);
}

TEST(ConfigParse, ZipGroupsAndSpecialValues) {
  const KernelBlock block = first_block(
      "name: zipped\nkernels:\n  - kernel: distill_cosine_loss\n    grid:\n"
      "      tokens: [64, 128]\n      vocab: [1000, 2000]\n      hidden: [2, 4]\n      chunk_size: [8, 16]\n"
      "    zip: [[tokens, vocab], [chunk_size, hidden]]\n");
  EXPECT_EQ(block.zip, (std::vector<std::vector<std::string>>{{"tokens", "vocab"}, {"chunk_size", "hidden"}}));
}

TEST(ConfigParse, ErrorIsOneLineWithFileLineColumnAndKey) {
  const SweepFileError error = parse_error("name: x\nprotocol:\n  max_repeat: 0\nkernels: []\n");
  EXPECT_STREQ(error.what(), "inline.yaml:3:15: protocol.max_repeat: must be >= 1, got 0");
  EXPECT_EQ(error.where().file, "inline.yaml");
  EXPECT_EQ(error.where().line, 3);
  EXPECT_EQ(error.where().column, 15);
  EXPECT_EQ(error.key(), "protocol.max_repeat");
  EXPECT_EQ(error.problem(), "must be >= 1, got 0");
}

TEST(ConfigParse, MinRepeatAboveMaxRepeatIsRefusedWithItsKey) {
  const SweepFileError error = parse_error("name: x\nprotocol:\n  max_repeat: 5\n  min_repeat: 6\nkernels: []\n");
  EXPECT_EQ(error.key(), "protocol.min_repeat");
  EXPECT_EQ(error.where().line, 4);
  EXPECT_EQ(error.problem(), "must be <= max_repeat (5), got 6");
}

// energy: a key of every protocol, a boolean, off unless written.
TEST(ConfigParse, EnergyIsABooleanOfEveryProtocolRefusedWithItsFileLineAndKey) {
  const std::string kernels = "kernels: [{kernel: gemm, implementations: [cpu], grid: {M: [8], N: [8], K: [8]}}]\n";
  EXPECT_FALSE(parse("name: x\n" + kernels).protocol.energy);
  for (const std::string name : {"do_bench", "cold", "graph"})
    EXPECT_TRUE(parse("name: x\nprotocol: {name: " + name + ", energy: true}\n" + kernels).protocol.energy) << name;
  const SweepFileError error = parse_error("name: x\nprotocol:\n  name: cold\n  energy: 1\nkernels: []\n");
  EXPECT_EQ(error.key(), "protocol.energy");
  EXPECT_EQ(error.where().file, "inline.yaml");
  EXPECT_EQ(error.where().line, 4);
  EXPECT_EQ(error.problem().rfind("expected a boolean (true or false)", 0), 0u) << error.what();
}

TEST(ConfigParse, AKeyOfAnotherProtocolIsRefusedNamingTheProtocolsThatTakeIt) {
  const SweepFileError cold = parse_error("name: x\nprotocol:\n  name: cold\n  rep_ms: 5\nkernels: []\n");
  EXPECT_EQ(cold.key(), "protocol.rep_ms");
  EXPECT_EQ(cold.where().line, 4);
  EXPECT_EQ(cold.problem(), "'rep_ms' is a key of protocol do_bench and graph, not of cold") << cold.what();
  const SweepFileError do_bench = parse_error("name: x\nprotocol:\n  max_noise: 0.01\nkernels: []\n");
  EXPECT_EQ(do_bench.problem(), "'max_noise' is a key of protocol cold, not of do_bench") << do_bench.what();
}

TEST(ConfigParse, ColdAndGraphKeysAreRead) {
  const SweepSpec cold = parse(
      "name: x\nprotocol: {name: cold, max_noise: 0.01, min_samples: 20, min_time_s: 1, timeout_s: 30,\n"
      "  throttle_threshold: 0.8, throttle_pause_s: 0.1, flush_bytes: 1024}\nkernels: [{kernel: gemm, implementations: "
      "[cpu], grid: {M: [8], N: [8], K: [8]}}]\n");
  EXPECT_EQ(cold.protocol.name, "cold");
  EXPECT_EQ(cold.protocol.cold.max_noise, 0.01);
  EXPECT_EQ(cold.protocol.cold.min_samples, 20);
  EXPECT_EQ(cold.protocol.cold.min_time_s, 1);
  EXPECT_EQ(cold.protocol.cold.timeout_s, 30);
  EXPECT_EQ(cold.protocol.cold.throttle_threshold, 0.8);
  EXPECT_EQ(cold.protocol.cold.throttle_pause_s, 0.1);
  const SweepSpec graph = parse(
      "name: x\nprotocol: {name: graph, rep_ms: 20, replays: 25}\nkernels: [{kernel: gemm, implementations: [cpu], "
      "grid: {M: [8], N: [8], K: [8]}}]\n");
  EXPECT_EQ(graph.protocol.replays, 25);
  EXPECT_EQ(graph.protocol.repetitions, 1);
  EXPECT_EQ(parse("name: x\nprotocol: {name: cold, repetitions: 20}\nkernels: [{kernel: gemm, implementations: [cpu], "
                  "grid: {M: [8], N: [8], K: [8]}}]\n")
                .protocol.repetitions,
            20);
  EXPECT_EQ(parse_error("name: x\nprotocol: {repetitions: 0}\nkernels: []\n").problem(), "must be >= 1, got 0");
  EXPECT_EQ(parse_error("name: x\nprotocol: {name: cold, min_samples: 1}\nkernels: []\n").problem(),
            "must be >= 2, got 1");
}

TEST(ConfigParse, AnEmptyListOfQuantilesIsRefused) {
  const SweepFileError error = parse_error("name: x\nprotocol:\n  quantiles: []\nkernels: []\n");
  EXPECT_EQ(error.key(), "protocol.quantiles");
  EXPECT_EQ(error.problem(), "empty list") << error.what();
}

// rep_ms 0 asks for the fewest timed calls min_repeat allows (tests use it to keep measurements short).
TEST(ConfigParse, ZeroRepetitionTimeIsAccepted) {
  const SweepSpec spec =
      parse("name: x\nprotocol: {warmup_ms: 0, rep_ms: 0}\nkernels:\n  - kernel: gemm\n    grid: {M: [8]}\n");
  EXPECT_EQ(spec.protocol.warmup_ms, 0);
  EXPECT_EQ(spec.protocol.rep_ms, 0);
}

TEST(ConfigParse, MissingFileIsAnError) {
  const std::string path = source_path("tests/data/config/no-such-file.yaml");
  try {
    load_sweep_file(path, builtin_registry());
    FAIL() << "loaded a file that does not exist";
  } catch (const SweepFileError& error) {
    EXPECT_EQ(error.where().file, path);
    EXPECT_EQ(error.key(), "(file)");
    EXPECT_NE(error.problem().find("cannot open"), std::string::npos) << error.what();
  }
}

// --- bad files ----------------------------------------------------------------------------------

// A bad file's first line: "# expect: LINE:COL: KEY: substring of the problem".
struct Expectation {
  int line = 0;
  int column = 0;
  std::string key;
  std::string problem_part;
};

Expectation expectation_of(const std::string& path) {
  std::ifstream file(path);
  std::string first_line;
  std::getline(file, first_line);
  static const std::regex form("# expect: ([0-9]+):([0-9]+): (\\S+): (.+)");
  std::smatch match;
  if (!std::regex_match(first_line, match, form))
    throw std::runtime_error(path + ": first line is not '# expect: ...'");
  return {std::stoi(match[1]), std::stoi(match[2]), match[3], match[4]};
}

std::vector<std::string> bad_files() {
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(source_path("tests/data/config/bad")))
    if (entry.path().extension() == ".yaml") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

// A key or value from the file that holds control characters cannot break the one-line message or
// drive the terminal: they are shown as \xNN.
TEST(ConfigErrors, ControlCharactersAreShownNotSent) {
  const std::string path = (testing::fresh_directory("config_control_characters") / "sweep.yaml").string();
  testing::write_file(path, "name: bad\nkernels:\n  - kernel: gemm\n    grid: {\"M\\e[31m\\nX\": [1]}\n");
  try {
    load_sweep_file(path, builtin_registry());
    ADD_FAILURE() << "parsed without error";
  } catch (const SweepFileError& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("M\\x1b[31m\\x0aX"), std::string::npos) << what;
    EXPECT_TRUE(std::none_of(what.begin(), what.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
        << what;
    EXPECT_EQ(error.key(), "kernels[0].grid.M\x1b[31m\nX") << "the key itself is kept as it is";
  }
}

TEST(ConfigBadFiles, EachFailsWhereItsFirstLineSays) {
  const std::vector<std::string> paths = bad_files();
  EXPECT_GE(paths.size(), 30u);
  std::set<std::string> distinct_problems;
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    const Expectation expected = expectation_of(path);
    distinct_problems.insert(expected.key + ": " + expected.problem_part);
    try {
      load_sweep_file(path, builtin_registry());
      ADD_FAILURE() << "parsed without error";
    } catch (const SweepFileError& error) {
      EXPECT_EQ(error.where().file, path);
      EXPECT_EQ(error.where().line, expected.line) << error.what();
      EXPECT_EQ(error.where().column, expected.column) << error.what();
      EXPECT_EQ(error.key(), expected.key) << error.what();
      EXPECT_NE(error.problem().find(expected.problem_part), std::string::npos) << error.what();
      const std::string what = error.what();
      EXPECT_EQ(what.find('\n'), std::string::npos);
      EXPECT_EQ(what.rfind(path + ":" + std::to_string(expected.line) + ":" + std::to_string(expected.column) + ": " +
                               expected.key + ": ",
                           0),
                0u)
          << what;
    }
  }
  EXPECT_EQ(distinct_problems.size(), paths.size()) << "two bad files expect the same error";
}

// --- the documentation and the shipped sweeps ---------------------------------------------------

std::string first_yaml_block(const std::string& markdown) {
  const std::string fence = "```yaml\n";
  const std::size_t start = markdown.find(fence);
  if (start == std::string::npos) throw std::runtime_error("no ```yaml block");
  const std::size_t body = start + fence.size();
  const std::size_t end = markdown.find("\n```", body);
  if (end == std::string::npos) throw std::runtime_error("unterminated ```yaml block");
  return markdown.substr(body, end - body + 1);
}

TEST(ConfigDocs, FirstExampleOfTheSweepFileDocParses) {
  const std::string doc = source_path("docs/sweep-file.md");
  const std::string example = first_yaml_block(read_text(doc));
  const SweepSpec spec = parse_sweep_text(example, doc, builtin_registry());
  EXPECT_FALSE(spec.kernels.empty());
  EXPECT_EQ(spec.source_text, example);
}

TEST(ConfigDocs, FirstExampleOfTheMeasurementDocParses) {
  const std::string doc = source_path("docs/measurement.md");
  const SweepSpec spec = parse_sweep_text(first_yaml_block(read_text(doc)), doc, builtin_registry());
  ASSERT_EQ(spec.kernels.size(), 1u);
  EXPECT_EQ(spec.kernels[0].kernel, "gemm");
  EXPECT_EQ(spec.kernels[0].implementations, std::vector<std::string>{"cublaslt"});
  EXPECT_EQ(spec.protocol.warmup_ms, 25);
  EXPECT_EQ(spec.protocol.rep_ms, 100);
}

TEST(ConfigShipped, EveryConfigParses) {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(source_path("configs")))
    if (entry.path().extension() == ".yaml") paths.push_back(entry.path());
  ASSERT_FALSE(paths.empty());
  for (const auto& path : paths) {
    SCOPED_TRACE(path.string());
    const SweepSpec spec = load_sweep_file(path.string(), builtin_registry());
    EXPECT_EQ(spec.name, path.stem().string());
    EXPECT_EQ(spec.output.directory, "results/" + path.stem().string());
  }
}

// Points per block, counted from the spec: zipped axes count once, every implementation times every
// mode. (Planning proper, with exclude and deduplication, is src/plan's and its tests'.)
std::size_t grid_points(const KernelBlock& block) {
  std::size_t shapes = 1;
  for (const auto& a : block.grid) {
    const bool zipped_follower = std::any_of(block.zip.begin(), block.zip.end(), [&](const auto& group) {
      return std::find(group.begin() + 1, group.end(), a.name) != group.end();
    });
    if (!zipped_follower) shapes *= a.values.size();
  }
  return (shapes + block.include.size()) * block.implementations.size() * block.modes.size();
}

TEST(ConfigShipped, LigerSweepIsTheSeedsShapesOnEveryImplementationAndLigersOwnDraw) {
  const SweepSpec spec = load_sweep_file(source_path("configs/liger-distill-cosine.yaml"), builtin_registry());
  ASSERT_EQ(spec.kernels.size(), 2u);
  const KernelBlock& liger_draw = spec.kernels[1];
  EXPECT_EQ(liger_draw.implementations, (std::vector<std::string>{"liger", "torch"}));
  EXPECT_EQ(liger_draw.modes, (std::vector<std::string>{"full"}));
  EXPECT_EQ(liger_draw.fixed.at("inputs"), "torch_rand");
  EXPECT_EQ(grid_points(liger_draw), 8u);
  const KernelBlock& block = spec.kernels[0];
  EXPECT_EQ(block.kernel, "distill_cosine_loss");
  EXPECT_EQ(block.implementations, (std::vector<std::string>{"fused", "naive", "liger", "torch"}));
  EXPECT_EQ(block.modes, (std::vector<std::string>{"forward", "backward", "full", "no-grad-forward"}));
  EXPECT_EQ(axis(block, "tokens").values, ints({1024, 2048, 4096, 8192}));
  EXPECT_EQ(block.fixed.at("hidden"), 4096);
  EXPECT_EQ(block.fixed.at("vocab"), 128256);
  EXPECT_EQ(block.fixed.at("dtype"), "bf16");
  EXPECT_EQ(grid_points(block), 64u);
}

TEST(ConfigShipped, QuickstartKeepsItsCpuPointsFew) {
  const SweepSpec spec = load_sweep_file(source_path("configs/quickstart.yaml"), builtin_registry());
  std::size_t cpu_points = 0;
  for (const KernelBlock& block : spec.kernels) {
    const KernelSpec& kernel = *builtin_registry().find(block.kernel);
    std::size_t cpu_implementations = 0;
    for (const auto& name : block.implementations)
      if (kernel.implementation(name)->backend == Backend::cpu) ++cpu_implementations;
    cpu_points += grid_points(block) / block.implementations.size() * cpu_implementations;
  }
  // Each CPU point costs about warmup + rep (125 ms) plus setup: ~25 points stay under a minute.
  EXPECT_GT(cpu_points, 0u);
  EXPECT_LE(cpu_points, 25u);
}

}  // namespace
}  // namespace ks
