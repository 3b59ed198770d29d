#pragma once
// One results file of a history, read for what a history needs and nothing more: each point's median
// on each device, and what names the run (its time and labels). Only the few columns of /runs that
// say which point a row is, on what device, whether it passed and its median are read, a block of
// rows at a time (ResultsFile::scan_runs): a file's samples, messages and figures stay on disk, so a
// history of hundreds of files holds one file's medians at a time beside the series.
#include <cstdint>
#include <string>
#include <vector>

#include "history/run_order.h"

namespace ks::history {

// What a series is a series of: the same point (its id says kernel, implementation, mode and
// parameters) on the same device. A point measured on two GPUs (as Liger's benchmarks are) makes
// two series.
struct SeriesIdentity {
  std::string point_id;
  std::string kernel, implementation, mode;
  std::string params_json;  // canonical JSON
  std::string device;       // the environment's product and form factor ("NVIDIA H200 SXM5-141GB"); "" unknown
  std::string key() const { return point_id + '\n' + device; }
};

// A point's median in one file: that of its latest row, as the current view has it (view/view.h),
// the median of its repetitions' medians under `repetitions`; NaN where its latest row did not pass.
// Rows that passed without a timing (another tool's peak-memory measurement) are not timings, and
// are passed over.
struct PointMedian {
  SeriesIdentity identity;
  double median_ns = 0;
};

struct FileMedians {
  HistoryRun run;                   // with its time and labels
  std::vector<PointMedian> points;  // in the order the points first appear in the file
};

// Reads `run.file` (whose file and argument are kept). Throws ResultsFileError, naming the file.
FileMedians read_file_medians(HistoryRun run);

// The device an ExecutionEnvironment document describes: spec.hardware's product and formFactor,
// space-separated; "" where the document says neither (or does not parse).
std::string device_of_environment(const std::string& document_json);

}  // namespace ks::history
