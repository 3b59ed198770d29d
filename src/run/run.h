#pragma once
// The run stage: a sweep file end to end, and the commands that inspect a sweep or its results.
// Each takes what the command line said (parsed by src/cli) and the kernel registry, prints what it
// has to say, and returns the process's exit code.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/kernel.h"

namespace ks {

inline constexpr int kExitOk = 0;        // success
inline constexpr int kExitFailure = 1;   // a run finished with points that did not pass, or an internal error
inline constexpr int kExitBadInput = 2;  // bad input: sweep file, arguments, an existing results file
// The run was interrupted (SIGTERM, SIGINT: a time limit, scancel, Ctrl-C) and stored what it had:
// `kernelsweep run --resume` completes it. 75 is EX_TEMPFAIL of sysexits.h, "try again later".
inline constexpr int kExitInterrupted = 75;

struct PlanRequest {
  std::string sweep_file;
  std::vector<std::string> plugins;         // --plugin: libraries (paths or names) to load first
  std::vector<std::string> python_modules;  // --python-module: modules of Python kernels to load first
  std::vector<std::string> python_path;     // --python-path: folders for their import
  std::uint64_t max_points = 100'000'000;
  std::string shard;  // "i/N" or empty
  std::string where;  // --where: the points of the plan (of the shard) to keep (view/filter.h)
  bool json = false;  // --json of plan and kernels
  // The sweep file's text as a results file keeps it, for status and merge to plan it again: then
  // sweep_file is the path it had, nothing is read, and the command has loaded its plugins itself.
  std::optional<std::string> sweep_text;
};

struct RunRequest {
  PlanRequest plan;
  std::string output_directory;         // overrides the sweep file's output.directory
  std::string results_file;             // overrides output.results_file
  std::string kernelindex_format;       // overrides output.kernelindex_format
  std::string kernelindex_compression;  // overrides output.kernelindex_compression
  bool resume = false;
  bool overwrite = false;
  bool retry_skipped = false;  // --resume records points skipped before again even where they are still skipped
  std::string schedule = "dynamic";
  std::string check = "first";  // none, first (first mode of each shape), all
  bool allow_shared_gpu = false;
  double progress_interval_s = 10;
  std::string stop_file;               // --stop-file: rank 0 stops the run in order once this file exists
  std::string calibrate = "auto";      // auto, fresh or off (calibration/calibration_cache.h)
  bool exclude_slow = false;           // slow ranks measure nothing (calibration/fleet_health.h)
  std::string sentinel_every = "10m";  // calibration/sentinel.h: parse_sentinel_interval
  std::vector<std::string> labels;     // --label KEY=VALUE: the run's labels (store/run_labels.h)
};

// `kernelsweep submit`: a sweep as a Slurm job array of `array` shards and a merge job (docs/slurm.md).
struct SubmitRequest {
  PlanRequest plan;                         // the sweep file and its --plugin
  int array = 0;                            // shards, one array task each
  std::string output_directory;             // default results/STEM (STEM: the sweep file's name less .yaml)
  std::string batch_script;                 // default: slurm/sweep.sbatch, installed or of the source tree
  std::vector<std::string> sbatch_options;  // given to both sbatch commands
  std::vector<std::string> run_options;     // given to `kernelsweep run` in every task
  bool dry_run = false;                     // print the two sbatch commands instead of running them
};

// `kernelsweep calibrate`: what each rank's devices can do (docs/speed-of-light.md).
struct CalibrateRequest {
  bool json = false;             // one JSON object per rank, one per line
  bool fresh = false;            // measure even where a calibration is kept
  std::string output_directory;  // keep calibrations in its calibration/ folder, as `run` does
  bool allow_shared_gpu = false;
};

// The plugins each command names are loaded into `registry` first.
// `kernelsweep validate`: "ok: N points", or the sweep file's first error.
int validate_sweep(const PlanRequest& request, Registry& registry);
// `kernelsweep plan`: the points, as a table or JSON.
int print_plan(const PlanRequest& request, Registry& registry);
// `kernelsweep kernels`: kernels, parameters, modes, implementations, and the plugins they come from.
// `request`: its plugins, Python modules and --json (the sweep file is not read).
int print_kernels(const PlanRequest& request, Registry& registry);
// `kernelsweep run`, on every rank of the MPI job (argc and argv go to MPI_Init).
int submit_sweep(const SubmitRequest& request, Registry& registry);
int run_sweep(const RunRequest& request, Registry& registry, int* argc, char*** argv);
// `kernelsweep calibrate`, on every rank of the MPI job: rank 0 prints a row per rank.
int calibrate_ranks(const CalibrateRequest& request, Registry& registry, int* argc, char*** argv);
// `kernelsweep status`: what a results file holds (its sweep re-planned with the plugins it names).
int print_status(const std::string& results_file, bool json, const std::vector<std::string>& plugins,
                 Registry& registry);

}  // namespace ks
