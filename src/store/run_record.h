#pragma once
// One row of the /runs table: a point, where and how it ran, its aggregates and digests. The raw
// samples travel beside it and land in /samples at [samples_offset, samples_offset + samples_count).
#include <cstdint>
#include <string>
#include <vector>

#include "measure/measurement.h"

namespace ks {

// passed: timed, and the self-check (where run) agreed with the reference.
// failed: timed, but the self-check disagreed.
// error: the kernel threw (CUDA out of memory, launch failure, bad parameters for the device...).
// crashed: the worker process died during the point (signal or exit).
// timeout: the point ran past its timeout_s; the worker was killed.
// skipped: not run here (a cuda implementation on a rank without a GPU), with the reason.
inline constexpr const char* kStatuses[] = {"passed", "failed", "error", "crashed", "timeout", "skipped"};

struct RunRecord {
  std::string point_id;
  std::string kernel, implementation, mode;
  std::string params_json;      // canonical JSON of the point's parameters
  std::string status;           // one of kStatuses
  std::string message;
  std::int32_t rank = 0;
  std::string host;
  std::string gpu_uuid;         // empty on a CPU rank
  std::string started_at;       // UTC, ISO 8601 with milliseconds: 2026-11-30T12:00:00.000Z
  std::string ended_at;
  std::int64_t n_warmup = 0, n_repeat = 0;
  Statistics stats;
  double flops = 0, bytes = 0;
  double tflops = 0, gbps = 0;  // from the median
  std::uint64_t device_peak_bytes = 0;
  std::string protocol_digest, environment_digest, workload_digest, implementation_digest;
  std::uint64_t samples_offset = 0, samples_count = 0;  // set by the store
  std::vector<double> samples_ns;                        // the raw samples (not a /runs column)
};

}  // namespace ks
