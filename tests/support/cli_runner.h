#pragma once
// Running the real kernelsweep binaries (under the real mpirun) from tests.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ks::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// A sweep file named `name` of `kernels` (the lines of its kernels list), timed by a quick protocol:
// 1 ms of warm-up, 4 ms of repetitions, at most `max_repeat` of them, no flush.
std::string quick_sweep(const std::string& name, const std::string& kernels, int max_repeat = 100);

// test_sleep's 12 shapes on cpu and gpu_only (two modes each; gpu_only points are skipped without a
// GPU, so some rows have no samples) and 4 of the CPU gemm: 6 * 2 * 2 + 4 points.
extern const char* const kSleepAndCpuGemmKernels;

// Runs a shell command, capturing its output; mpirun is allowed to run as root.
CommandResult run_shell(const std::string& command);

struct CommandOutput {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs a shell command, capturing its stdout and its stderr apart.
CommandOutput run_command(const std::string& command);

// "mpirun -np N --oversubscribe <kernelsweep-test> ARGS"
std::string mpirun_test_cli(int ranks, const std::string& args);

// A fresh, empty folder under the build tree for one test process.
std::filesystem::path fresh_directory(const std::string& name);

void write_file(const std::filesystem::path& path, const std::string& text);

// Writes `text` as the sweep file dir/sweep.yaml; its path.
std::filesystem::path write_sweep(const std::filesystem::path& dir, const std::string& text);

// Waits until the results file a running sweep writes holds at least `rows` rows, or `seconds` pass;
// the rows it holds then (0 while the file is not there or not yet flushed once).
std::uint64_t wait_for_rows(const std::filesystem::path& results, std::uint64_t rows, double seconds = 30);

// The whole file, byte for byte; throws naming the file when it cannot be read.
std::string read_text(const std::filesystem::path& path);

// The text's lines, without their newlines (a last line without one counts too).
std::vector<std::string> lines_of(const std::string& text);

// A JSON file, parsed.
nlohmann::json read_json(const std::filesystem::path& path);

// The ids of the points `kernelsweep plan --json` gives for a sweep file (the test build, which
// knows the test kernels), in plan order.
std::vector<std::string> planned_ids(const std::filesystem::path& sweep);

}  // namespace ks::testing
