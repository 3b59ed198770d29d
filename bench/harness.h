#pragma once
// Shared by the harness benchmarks: run a generated sweep under mpirun and time it, with the tests'
// helpers for running the test build of kernelsweep (tests/support/cli_runner.h).
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "support/cli_runner.h"

namespace ks::bench {

struct Timed {
  double seconds = 0;
  int exit_code = 0;
};

// Runs `mpirun -np ranks kernelsweep-test ARGS` and returns its wall time; throws when it fails.
inline Timed run_sweep(int ranks, const std::string& args) {
  const std::string command = ks::testing::mpirun_test_cli(ranks, args) + " > /dev/null";
  const auto start = std::chrono::steady_clock::now();
  const ks::testing::CommandResult result = ks::testing::run_shell(command);
  Timed t;
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  t.exit_code = result.exit_code;
  if (t.exit_code != 0)
    throw std::runtime_error(fmt::format("sweep failed ({}): {}\n{}", t.exit_code, command, result.output));
  return t;
}

// A fresh folder for one benchmark's files (under the build tree, as the tests' are).
inline std::filesystem::path scratch(const std::string& name) { return ks::testing::fresh_directory("bench-" + name); }

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  ks::testing::write_file(path, text);
}

// The lightest protocol: one warm-up and one timed call, no flush: the point costs only kernelsweep.
inline constexpr const char* kBareProtocol =
    "protocol:\n  warmup_ms: 0\n  rep_ms: 0\n  max_repeat: 1\n  flush_bytes: 0\n";

}  // namespace ks::bench
