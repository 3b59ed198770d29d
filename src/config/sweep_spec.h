#pragma once
// SweepSpec: what a sweep file says, checked against the kernel registry, before any point exists.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/huge_pages.h"
#include "common/printable.h"

namespace ks {

using Json = nlohmann::json;

struct SourceLocation {
  std::string file;
  int line = 0;    // 1-based
  int column = 0;  // 1-based
};

// Every problem with a sweep file: one line "FILE:LINE:COL: key: what is wrong". The CLI prints
// what() and exits with code 2.
class SweepFileError : public std::runtime_error {
 public:
  SweepFileError(SourceLocation where, std::string key, std::string problem)
      : std::runtime_error(
            printable(fmt::format("{}:{}:{}: {}: {}", where.file, where.line, where.column, key, problem))),
        where_(std::move(where)),
        key_(std::move(key)),
        problem_(std::move(problem)) {}
  const SourceLocation& where() const { return where_; }
  const std::string& key() const { return key_; }
  const std::string& problem() const { return problem_; }

 private:
  SourceLocation where_;
  std::string key_;
  std::string problem_;
};

// Every parameter of the timing method: two figures are comparable exactly when these match.
// The cold protocol's stopping rule and throttle handling (docs/measurement.md): sampling stops once
// the samples' relative standard deviation is at most max_noise, with at least min_samples samples
// and min_time_s of measured time, or at timeout_s of wall time; a sample whose SM clock ran under
// throttle_threshold of the device's peak is dropped, and the next one taken throttle_pause_s later.
struct ColdRule {
  double max_noise = 0.005;
  std::int64_t min_samples = 10;
  double min_time_s = 0.5;
  double timeout_s = 15;
  double throttle_threshold = 0.75;
  double throttle_pause_s = 0.05;
};

struct ProtocolSpec {
  std::string name = "do_bench";  // do_bench, cold or graph
  double warmup_ms = 25;
  double rep_ms = 100;
  // Timed repetitions at least, whatever rep_ms allows (max_repeat still caps them). Unset: 1 on a
  // GPU (Triton's do_bench), 10 on the CPU.
  std::optional<std::int64_t> min_repeat;
  std::int64_t max_repeat = 10000;
  // Bytes zeroed before each timed call to flush caches. Unset: 256 MiB on a GPU (Triton's
  // do_bench), the last-level cache size on the CPU. 0 turns the flush off.
  std::optional<std::int64_t> flush_bytes;
  std::vector<double> quantiles{0.5, 0.2, 0.8};
  // Each point measured this many times, the repetitions interleaved across the plan (round after
  // round), each recorded as its own run.
  std::int64_t repetitions = 1;
  ColdRule cold;
  // graph: how many times the captured calls are replayed and timed (Triton's n_retries).
  std::int64_t replays = 10;
  // do_bench and graph: read the SM clock over each sample on a GPU (cold always does).
  bool sm_clock_per_sample = true;
  // Every protocol: on a GPU, a point whose timed repetitions spanned less than ten seconds gets an
  // energy window of its own after them (measure/energy.h).
  bool energy = false;
};

// An axis's values: a range may hold a million (common/huge_pages.h).
using AxisValues = LargeVector<Json>;

struct Axis {
  std::string name;
  AxisValues values;  // in the order written (a range expands in order)
  SourceLocation where;
};

struct KernelBlock {
  std::string kernel;
  std::vector<std::string> implementations;
  std::vector<std::string> modes;
  std::vector<Axis> grid;                     // in file order; the last axis varies fastest
  Json fixed = Json::object();                // parameter -> one value
  std::vector<std::vector<std::string>> zip;  // groups of grid axes that advance together
  std::vector<Json> include;                  // extra points: objects of parameter -> value
  std::vector<Json> exclude;                  // rules: objects of key -> value or list of values;
                                              // keys are parameters, "implementation" or "mode"
  double timeout_s = 300;
  SourceLocation where;
};

struct OutputSpec {
  std::string directory = "results";  // relative to the working directory
  std::string results_file;           // default: NAME.h5 inside directory
  // Documents (docs/kernelindex.md): json (a file per run), jsonl (shards with an index), or auto (json
  // up to kernelindex_json_max_points points, jsonl above); jsonl shards compressed or not, closed at
  // kernelindex_shard_mb MiB.
  std::string kernelindex_format = "auto";
  std::string kernelindex_compression = "none";
  std::uint64_t kernelindex_json_max_points = 10'000;
  std::uint64_t kernelindex_shard_mb = 1024;
};

// A plugin the sweep file's `plugins:` list names (a path or a name), with where it is written.
struct PluginReference {
  std::string name;
  SourceLocation where;
  std::string key;  // plugins[i]
};

// The sweep file's `python:` section: the modules of kernels its Python worker imports, the folders
// put on its path (as written: relative to the sweep file's folder), and its interpreter.
struct PythonReferences {
  std::vector<PluginReference> modules;  // key python.modules[i]
  std::vector<PluginReference> path;     // key python.path[i]
  std::string interpreter;               // empty: KERNELSWEEP_PYTHON, else python3
  SourceLocation where;                  // of the section (the first module's problems name their own)
};

struct SweepSpec {
  std::string name;
  std::vector<PluginReference> plugins;
  PythonReferences python;
  std::string source_path;
  std::string source_text;  // the file's exact text, stored in the results file
  ProtocolSpec protocol;
  std::vector<KernelBlock> kernels;
  OutputSpec output;
};

}  // namespace ks
