#include "support/cli_runner.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

namespace ks::testing {

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

std::filesystem::path fresh_directory(const std::string& name) {
  const auto dir = std::filesystem::path(KS_BINARY_DIR) / "test-output" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path.string());
  out << text;
}

}  // namespace ks::testing
