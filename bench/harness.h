#pragma once
// Shared by the harness benchmarks: run a generated sweep under mpirun and read back its results.
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace ks::bench {

#ifndef KS_TEST_CLI
#error "the harness benchmarks need the test build of kernelsweep (configure with KERNELSWEEP_TESTS=ON)"
#endif

struct Timed {
  double seconds = 0;
  int exit_code = 0;
};

// Runs `mpirun -np ranks kernelsweep-test ARGS` and returns its wall time.
inline Timed run_sweep(int ranks, const std::string& args) {
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  const std::string command =
      fmt::format("{} -np {} --oversubscribe {} {} > /dev/null 2>&1", KS_MPIEXEC, ranks, KS_TEST_CLI, args);
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(command.c_str());
  Timed t;
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  t.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (t.exit_code != 0) throw std::runtime_error(fmt::format("sweep failed ({}): {}", t.exit_code, command));
  return t;
}

inline std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("kernelsweep-bench-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// The lightest protocol: one warm-up and one timed call, no flush: the point costs only kernelsweep.
inline constexpr const char* kBareProtocol = "protocol:\n  warmup_ms: 0\n  rep_ms: 0\n  max_repeat: 1\n  flush_bytes: 0\n";

}  // namespace ks::bench
