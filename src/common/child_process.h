#pragma once
// A program run to its end with its output collected: the Python interpreter describing modules,
// sbatch submitting a job.
#include <string>
#include <vector>

namespace ks {

struct ChildOutput {
  int exit_code = -1;  // -1: killed by a signal or not started (127: the program could not be run)
  std::string out, err;
};

// Runs argv (argv[0] looked up in PATH) with `environment`, its standard output and error collected.
// The child dies with us. Throws std::runtime_error when it cannot be started.
ChildOutput run_collecting(const std::vector<std::string>& argv, const std::vector<std::string>& environment);

}  // namespace ks
