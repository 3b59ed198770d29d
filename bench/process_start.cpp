// What starting a kernelsweep process costs: every command, every rank and every worker pays it.
// Runs `PROGRAM --version` and `PROGRAM validate configs/quickstart.yaml` RUNS times each (after one
// run not counted) and prints the wall time's minimum, median and maximum and the largest resident
// memory of one run.
//
//   build/bench/bench_process_start [RUNS=50] [PROGRAM=build/kernelsweep]
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

extern char** environ;

namespace {

struct Run {
  double wall_ms = 0;
  long max_rss_kb = 0;
};

// One run of the command, its output thrown away; throws when it cannot start or does not exit 0.
Run run_once(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) throw std::runtime_error(fmt::format("cannot start {}: error {}", command[0], error));
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  Run run;
  run.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  run.max_rss_kb = usage.ru_maxrss;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(fmt::format("{} {} did not exit 0", command[0], command.size() > 1 ? command[1] : ""));
  return run;
}

void report(const std::string& what, const std::vector<std::string>& command, int runs) {
  run_once(command);  // not counted: the first run also reads the files from disk
  std::vector<double> wall;
  long rss = 0;
  for (int i = 0; i < runs; ++i) {
    const Run run = run_once(command);
    wall.push_back(run.wall_ms);
    rss = std::max(rss, run.max_rss_kb);
  }
  std::sort(wall.begin(), wall.end());
  std::printf("%-34s %6.1f %8.1f %6.1f %10.1f\n", what.c_str(), wall.front(), wall[wall.size() / 2], wall.back(),
              rss / 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::stoi(argv[1]) : 50;
  const std::string program = argc > 2 ? argv[2] : KS_CLI;
  const std::string sweep = std::string(KS_SOURCE_DIR) + "/configs/quickstart.yaml";
  std::printf("process start: %s, %d runs each\n", program.c_str(), runs);
  std::printf("%-34s %6s %8s %6s %10s\n", "command", "min ms", "median", "max", "peak MiB");
  report("--version", {program, "--version"}, runs);
  report("validate configs/quickstart.yaml", {program, "validate", sweep}, runs);
  return 0;
}
