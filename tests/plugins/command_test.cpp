// Plugins as the command line meets them: named with --plugin or in a sweep file, refused with one
// line that says where, listed by `kernelsweep kernels`, and loaded by every rank's worker too.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kernels/kernel.h"
#include "store/results_file.h"
#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using ks::testing::read_text;
using ks::testing::run_shell;

// A sweep of the good test plugin's kernel and of its implementation of the built-in noop.
std::string square_sweep(const std::string& plugins_line) {
  return fmt::format(
      "name: squares\n{}kernels:\n  - kernel: test_plugin_square\n    grid:\n      n: [4, 1000, 4096]\n"
      "  - kernel: noop\n    implementations: [cpu, from_plugin]\n    grid:\n      id: [1, 2]\n",
      plugins_line);
}

TEST(PluginCommands, KernelsListsAPluginsKernelsAndImplementations) {
  const auto listed = run_shell(fmt::format("{} kernels --plugin {}", KS_CLI, KS_TEST_PLUGIN_GOOD));
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("test_plugin_square: y = x·x, elementwise [plugin ks_test_plugin_good 1.2.3]"),
            std::string::npos)
      << listed.output;
  EXPECT_NE(listed.output.find("from_plugin (cpu) [plugin ks_test_plugin_good 1.2.3]"), std::string::npos)
      << listed.output;

  const auto json = run_shell(fmt::format("{} kernels --json --plugin {}", KS_CLI, KS_TEST_PLUGIN_GOOD));
  ASSERT_EQ(json.exit_code, 0) << json.output;
  bool found = false;
  for (const auto& kernel : nlohmann::json::parse(json.output))
    if (kernel.at("name") == "test_plugin_square") {
      found = true;
      EXPECT_EQ(kernel.at("origin").at("version"), "1.2.3");
      EXPECT_EQ(kernel.at("origin").at("library"), fs::canonical(KS_TEST_PLUGIN_GOOD).string());
    } else if (kernel.at("name") == "gemm") {
      EXPECT_TRUE(kernel.at("origin").is_null());
    }
  EXPECT_TRUE(found);
}

TEST(PluginCommands, ASweepFileNamesItsPluginsByPathRelativeToItself) {
  const fs::path dir = ks::testing::fresh_directory("plugin-commands-path");
  fs::copy_file(KS_TEST_PLUGIN_GOOD, dir / "libsquare.so");
  const fs::path sweep = ks::testing::write_sweep(dir, square_sweep("plugins: [libsquare.so]\n"));
  const auto validated = run_shell(fmt::format("cd / && {} validate {}", KS_CLI, sweep.string()));
  EXPECT_EQ(validated.exit_code, 0) << validated.output;
  EXPECT_NE(validated.output.find("ok: 7 points"), std::string::npos) << validated.output;
}

TEST(PluginCommands, ARefusedPluginIsTheSweepFilesErrorAtItsEntry) {
  const fs::path dir = ks::testing::fresh_directory("plugin-commands-refused");
  const fs::path sweep =
      ks::testing::write_sweep(dir, square_sweep(fmt::format("plugins:\n  - {}\n", KS_TEST_PLUGIN_OTHER_API)));
  const auto validated = run_shell(fmt::format("{} validate {}", KS_CLI, sweep.string()));
  EXPECT_EQ(validated.exit_code, 2);
  EXPECT_EQ(validated.output,
            fmt::format("{}:3:5: plugins[0]: plugin library {}: built against kernel API {}; this kernelsweep has {}: "
                        "rebuild the plugin against this kernelsweep\n",
                        sweep.string(), fs::canonical(KS_TEST_PLUGIN_OTHER_API).string(), ks::kKernelApiVersion + 1,
                        ks::kKernelApiVersion));

  ks::testing::write_file(dir / "builtin.yaml",
                          square_sweep(fmt::format("plugins: [{}]\n", KS_TEST_PLUGIN_BUILTIN_KERNEL)));
  const auto refused = run_shell(fmt::format("{} validate {}", KS_CLI, (dir / "builtin.yaml").string()));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.output.find("builtin.yaml:2:11: plugins[0]: plugin"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("which is already registered (built in)"), std::string::npos) << refused.output;

  const auto missing = run_shell(fmt::format("{} validate {} --plugin no-such-plugin", KS_CLI, sweep.string()));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("plugin no-such-plugin not found"), std::string::npos) << missing.output;
}

// The plugin named on the rank's command line only: each rank's worker must load it too.
TEST(PluginCommands, WorkersLoadThePluginsOfTheirRank) {
  const fs::path dir = ks::testing::fresh_directory("plugin-commands-run");
  ks::testing::write_sweep(dir, square_sweep(""));
  const auto swept =
      run_shell(fmt::format("cd {} && {} -np 2 --oversubscribe {} run sweep.yaml --plugin {} --output-dir out",
                            dir.string(), KS_MPIEXEC, KS_CLI, KS_TEST_PLUGIN_GOOD));
  ASSERT_EQ(swept.exit_code, 0) << swept.output;
  const auto rows = ks::ResultsFile::open_read_only(dir / "out" / "squares.h5").read_runs();
  ASSERT_EQ(rows.size(), 7u);
  std::set<int> ranks;
  for (const auto& row : rows) {
    EXPECT_EQ(row.status, "passed") << row.kernel << "/" << row.implementation << ": " << row.message;
    ranks.insert(row.rank);
  }
  EXPECT_EQ(ranks.size(), 2u) << "both ranks' workers measured plugin points";
  for (const auto& entry : fs::directory_iterator(dir / "out" / "kernelindex")) {
    const auto object = nlohmann::json::parse(read_text(entry.path()));
    const auto& implementation = object.at("implementation").at("spec");
    if (implementation.at("implementation") == "cpu" && implementation.at("kernel") == "noop")
      EXPECT_FALSE(implementation.contains("plugin"));
    else EXPECT_EQ(implementation.at("plugin").at("name"), "ks_test_plugin_good");
  }
}

// A plugin's kernel that aborts costs its point only, as any kernel's: the worker dies, the point is
// recorded as crashed, a fresh worker takes the next one.
TEST(PluginCommands, APluginThatCrashesCostsOnlyItsPoint) {
  const fs::path dir = ks::testing::fresh_directory("plugin-commands-crash");
  ks::testing::write_sweep(
      dir, fmt::format("name: misbehaving\nplugins: [{}]\nkernels:\n  - kernel: test_plugin_misbehaving\n"
                       "    grid:\n      action: [none, abort, throw, none]\n",
                       KS_TEST_PLUGIN_MISBEHAVING));
  const auto swept = run_shell(fmt::format("cd {} && {} -np 2 --oversubscribe {} run sweep.yaml --output-dir out",
                                           dir.string(), KS_MPIEXEC, KS_CLI));
  EXPECT_EQ(swept.exit_code, 1) << swept.output;  // some points did not pass
  std::map<std::string, std::string> status_by_action;
  for (const auto& row : ks::ResultsFile::open_read_only(dir / "out" / "misbehaving.h5").read_runs())
    status_by_action[nlohmann::json::parse(row.params_json).at("action")] = row.status;
  EXPECT_EQ(status_by_action,
            (std::map<std::string, std::string>{{"none", "passed"}, {"abort", "crashed"}, {"throw", "error"}}));
}

}  // namespace
