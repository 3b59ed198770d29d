// The kernelsweep command's outputs and exit codes: 0 success, 2 bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace ks::testing {
namespace {

using Json = nlohmann::json;

std::string config(const std::string& name) {
  return (std::filesystem::path(KS_SOURCE_DIR) / "configs" / name).string();
}

TEST(Cli, VersionNamesTheCommit) {
  const auto r = run_shell(fmt::format("{} --version", KS_CLI));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("kernelsweep 0."), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("git "), std::string::npos) << r.output;
}

TEST(Cli, ValidateCountsThePoints) {
  const auto r = run_shell(fmt::format("{} validate {}", KS_CLI, config("liger-distill-cosine.yaml")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "ok: 72 points\n");
}

TEST(Cli, ValidateReportsABadFileOnOneLineWithExitCode2) {
  const auto dir = fresh_directory("cli_bad");
  write_file(dir / "bad.yaml", "name: bad\nkernels:\n  - kernel: gemm\n    grid:\n      M: [64]\n      dtyp: [fp32]\n");
  const auto r = run_shell(fmt::format("{} validate {}", KS_CLI, (dir / "bad.yaml").string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_EQ(r.output.rfind((dir / "bad.yaml").string() + ":6:7: ", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("dtype"), std::string::npos) << "a near miss should suggest the right name: " << r.output;
}

TEST(Cli, MissingFileAndUnknownCommandExitWith2) {
  EXPECT_EQ(run_shell(fmt::format("{} validate /nonexistent/sweep.yaml", KS_CLI)).exit_code, 2);
  EXPECT_EQ(run_shell(fmt::format("{} frobnicate", KS_CLI)).exit_code, 2);
  EXPECT_EQ(run_shell(fmt::format("{} plan", KS_CLI)).exit_code, 2);
}

// A path or an option holding a newline or an escape sequence is shown as \xNN: the message stays
// one line, and nothing reaches the terminal as a control sequence.
TEST(Cli, ControlCharactersInArgumentsAreEscapedInMessages) {
  const auto dir = fresh_directory("cli_control_characters");
  const std::string odd_name = (dir / "odd\x1b[31mname\n.h5").string();
  for (const std::string& arguments :
       {fmt::format("status '{}'", odd_name), fmt::format("show '{}'", odd_name),
        fmt::format("validate '{}'", odd_name), std::string("run '--bo\x1bgus' x.yaml")}) {
    const auto r = run_shell(fmt::format("{} {}", KS_CLI, arguments));
    EXPECT_NE(r.exit_code, 0) << arguments << ": " << r.output;
    EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << arguments << ": " << r.output;
    EXPECT_NE(r.output.find("\\x1b"), std::string::npos) << arguments << ": " << r.output;
    if (arguments.starts_with("run")) continue;  // CLI11 adds a line of its own ("Run with --help ...")
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << arguments << ": " << r.output;
  }
}

TEST(Cli, LigerPlanHas72PointsWhoseIdsDoNotChange) {
  const std::string command = fmt::format("{} plan {} --json", KS_CLI, config("liger-distill-cosine.yaml"));
  const auto first = run_shell(command);
  const auto second = run_shell(command);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(first.output, second.output);
  const Json points = Json::parse(first.output);
  ASSERT_EQ(points.size(), 72u);
  std::set<std::string> ids, implementations, modes, draws;
  for (const auto& p : points) {
    ids.insert(p.at("id").get<std::string>());
    implementations.insert(p.at("implementation").get<std::string>());
    modes.insert(p.at("mode").get<std::string>());
    EXPECT_EQ(p.at("params").at("vocab"), 128256);
    EXPECT_EQ(p.at("params").at("hidden"), 4096);
    draws.insert(p.at("params").at("inputs").get<std::string>());
  }
  EXPECT_EQ(ids.size(), 72u);
  EXPECT_EQ(implementations, (std::set<std::string>{"fused", "naive", "liger", "torch"}));
  EXPECT_EQ(draws, (std::set<std::string>{"counter", "torch_rand"}));
  EXPECT_EQ(modes, (std::set<std::string>{"forward", "backward", "full", "no-grad-forward"}));
}

TEST(Cli, PlanTablePrintsEveryPoint) {
  const auto r = run_shell(fmt::format("{} plan {}", KS_CLI, config("quickstart.yaml")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto v = run_shell(fmt::format("{} validate {}", KS_CLI, config("quickstart.yaml")));
  const int points = std::stoi(v.output.substr(4));
  EXPECT_NE(r.output.find(fmt::format("{} points in", points)), std::string::npos) << r.output;
}

TEST(Cli, ShardsPartitionThePlan) {
  std::multiset<std::string> union_of_shards;
  for (int i = 0; i < 3; ++i) {
    const auto r = run_shell(fmt::format("{} plan {} --json --shard {}/3", KS_CLI, config("quickstart.yaml"), i));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (const auto& p : Json::parse(r.output)) union_of_shards.insert(p.at("id").get<std::string>());
  }
  std::multiset<std::string> all;
  for (const auto& p :
       Json::parse(run_shell(fmt::format("{} plan {} --json", KS_CLI, config("quickstart.yaml"))).output))
    all.insert(p.at("id").get<std::string>());
  EXPECT_EQ(union_of_shards, all);
  EXPECT_EQ(run_shell(fmt::format("{} plan {} --shard 3/3", KS_CLI, config("quickstart.yaml"))).exit_code, 2);
}

// What `submit --dry-run` prints is what it would run: the array of shards through the batch script,
// then the merge job after all of them, both with the user's sbatch options.
TEST(Submit, DryRunPrintsTheArrayAndTheMergeJobsSbatchCommands) {
  const auto dir = fresh_directory("submit_dry_run");
  const auto r =
      run_shell(fmt::format("cd {} && {} submit {} --array 3 --dry-run --run-option=--check=all -- "
                            "--partition=gpu --signal=B:TERM@120 --time=30 --signal B:USR1@60",
                            dir.string(), KS_CLI, config("quickstart.yaml")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream lines(r.output);
  std::string array, merge, extra;
  std::getline(lines, array);
  std::getline(lines, merge);
  EXPECT_FALSE(std::getline(lines, extra)) << "two commands, nothing else: " << r.output;
  const std::string output = (dir / "results/quickstart").string();
  for (const std::string& part :
       {std::string("sbatch --parsable --array=0-2 --job-name=ks-quickstart --output=") + output + "/slurm-%A_%a.out",
        fmt::format("--export=ALL,KERNELSWEEP={},KERNELSWEEP_SHARDS=3,KERNELSWEEP_OUTPUT={}", KS_CLI, output),
        std::string(" --partition=gpu --signal=B:TERM@120 --time=30 --signal B:USR1@60 ") + KS_SOURCE_DIR +
            "/slurm/sweep.sbatch " + config("quickstart.yaml") + " --check=all"})
    EXPECT_NE(array.find(part), std::string::npos) << part << "\nnot in\n" << array;
  for (const std::string& part :
       {std::string("sbatch --parsable --dependency=afterany:ARRAY_ID "),
        std::string(" --partition=gpu --time=30 --nodes=1 --ntasks=1 "),
        fmt::format("{} merge {}/quickstart.shard-*-of-3.h5 -o {}/quickstart.h5 --overwrite", KS_CLI, output, output),
        fmt::format("{} status {}/quickstart.h5", KS_CLI, output)})
    EXPECT_NE(merge.find(part), std::string::npos) << part << "\nnot in\n" << merge;
  // The early signal is the batch script's, which stops its ranks on it; the merge job has no use for it.
  EXPECT_EQ(merge.find("--signal"), std::string::npos) << merge;
  EXPECT_EQ(merge.find("USR1"), std::string::npos) << merge;
  EXPECT_FALSE(std::filesystem::exists(dir / "results")) << "a dry run makes nothing";
}

TEST(Submit, RefusesABadSweepFileAndAnEmptyArray) {
  const auto dir = fresh_directory("submit_refusals");
  write_file(dir / "bad.yaml", "name: bad\nkernels:\n  - kernel: no_such_kernel\n");
  const auto bad = run_shell(fmt::format("{} submit {} --array 2 --dry-run", KS_CLI, (dir / "bad.yaml").string()));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("bad.yaml:3"), std::string::npos) << bad.output;
  const auto empty = run_shell(fmt::format("{} submit {} --array 0 --dry-run", KS_CLI, config("quickstart.yaml")));
  EXPECT_EQ(empty.exit_code, 2) << empty.output;
}

TEST(Cli, MaxPointsRefusesLargePlans) {
  const auto r = run_shell(fmt::format("{} plan {} --max-points 10", KS_CLI, config("liger-distill-cosine.yaml")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--max-points"), std::string::npos) << r.output;
}

TEST(Cli, KernelsListsTheRegistry) {
  const auto r = run_shell(fmt::format("{} kernels --json", KS_CLI));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::set<std::string> names;
  for (const auto& k : Json::parse(r.output)) names.insert(k.at("name").get<std::string>());
  EXPECT_TRUE(names.count("gemm"));
  EXPECT_TRUE(names.count("distill_cosine_loss"));
  EXPECT_FALSE(names.count("test_sleep")) << "test kernels are registered only in kernelsweep-test";
}

TEST(Cli, ResumeAndOverwriteExcludeEachOther) {
  const auto r = run_shell(fmt::format("{} run {} --resume --overwrite", KS_CLI, config("quickstart.yaml")));
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

}  // namespace
}  // namespace ks::testing
