#include "support/cli_runner.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "store/results_file.h"

namespace ks::testing {

std::string quick_sweep(const std::string& name, const std::string& kernels, int max_repeat) {
  return fmt::format(
      "name: {}\nprotocol:\n  warmup_ms: 1\n  rep_ms: 4\n  max_repeat: {}\n  flush_bytes: 0\n"
      "kernels:\n{}",
      name, max_repeat, kernels);
}

const char* const kSleepAndCpuGemmKernels = R"(  - kernel: test_sleep
    implementations: [cpu, gpu_only]
    modes: [forward, backward]
    grid:
      id: {from: 1, to: 6, step: 1}
  - kernel: gemm
    implementations: [cpu]
    grid:
      M: [16, 33]
      N: [8]
      K: [24]
      dtype: [fp32, bf16]
)";

CommandResult run_shell(const std::string& command) {
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  ::setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed: " + command);
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe)) result.output += buffer.data();
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string mpirun_test_cli(int ranks, const std::string& args) {
  return fmt::format("{} -np {} --oversubscribe {} {}", KS_MPIEXEC, ranks, KS_TEST_CLI, args);
}

CommandOutput run_command(const std::string& command) {
  char errors_path[] = "/tmp/kernelsweep-test-stderr-XXXXXX";
  const int errors_fd = ::mkstemp(errors_path);
  if (errors_fd < 0) throw std::runtime_error("mkstemp failed for the stderr of: " + command);
  ::close(errors_fd);
  const CommandResult run = run_shell(fmt::format("{{ {{ {} ; }} 2>{} ; }}", command, errors_path));
  CommandOutput result{run.exit_code, run.output, ""};
  std::ifstream errors(errors_path);
  std::stringstream text;
  text << errors.rdbuf();
  result.err = text.str();
  std::filesystem::remove(errors_path);
  return result;
}

// Tests of one suite may run at once in separate processes (ctest -j): each process gets its own
// folder, test-output/NAME/PID, and clears the folders of processes that are gone.
std::filesystem::path fresh_directory(const std::string& name) {
  const auto parent = std::filesystem::path(KS_BINARY_DIR) / "test-output" / name;
  std::filesystem::create_directories(parent);
  for (const auto& entry : std::filesystem::directory_iterator(parent)) {
    const std::string leaf = entry.path().filename().string();
    const bool owned_by_a_process = !leaf.empty() && leaf.find_first_not_of("0123456789") == std::string::npos;
    const bool process_is_gone = owned_by_a_process && ::kill(std::stoi(leaf), 0) != 0 && errno == ESRCH;
    // Another test process may be clearing the same stale folder: what it removed first is gone.
    std::error_code ignored;
    if (!owned_by_a_process || process_is_gone) std::filesystem::remove_all(entry.path(), ignored);
  }
  const auto dir = parent / std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path.string());
  out << text;
}

std::filesystem::path write_sweep(const std::filesystem::path& dir, const std::string& text) {
  const auto sweep = dir / "sweep.yaml";
  write_file(sweep, text);
  return sweep;
}

std::uint64_t wait_for_rows(const std::filesystem::path& results, std::uint64_t rows, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::uint64_t stored = 0;
  while (stored < rows && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    try {
      if (std::filesystem::exists(results)) stored = ResultsFile::open_read_only(results).run_count();
    } catch (const std::exception&) {
      // made but not yet flushed once
    }
  }
  return stored;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

nlohmann::json read_json(const std::filesystem::path& path) { return nlohmann::json::parse(read_text(path)); }

std::vector<std::string> planned_ids(const std::filesystem::path& sweep) {
  const auto planned = run_command(std::string(KS_TEST_CLI) + " plan " + sweep.string() + " --json");
  if (planned.exit_code != 0) throw std::runtime_error("kernelsweep plan " + sweep.string() + ": " + planned.err);
  std::vector<std::string> ids;
  for (const auto& p : nlohmann::json::parse(planned.out)) ids.push_back(p.at("id").get<std::string>());
  return ids;
}

}  // namespace ks::testing
