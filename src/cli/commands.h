#pragma once
// One function per `kernelsweep` subcommand; cli.cpp parses the arguments and calls them.
#include <cstdint>
#include <string>

namespace ks::cli {

struct PlanArguments {
  std::string sweep_file;
  std::uint64_t max_points = 1'000'000;
  std::string shard;  // "i/N" or empty
  bool json = false;
};

struct RunArguments {
  PlanArguments plan;
  std::string output_directory;    // overrides the sweep file's output.directory
  std::string results_file;        // overrides output.results_file
  std::string kernelindex_format;  // overrides output.kernelindex_format
  bool resume = false;
  bool overwrite = false;
  std::string schedule = "dynamic";
  std::string check = "first";     // none, first (first mode of each shape), all
  bool allow_shared_gpu = false;
  double progress_interval_s = 10;
};

int validate_command(const std::string& sweep_file);
int plan_command(const PlanArguments& args);
int kernels_command(bool json);
int run_command(const RunArguments& args, int* argc, char*** argv);
int status_command(const std::string& results_file, bool json);

}  // namespace ks::cli
