#pragma once
// A BenchmarkRun document's figures beyond its median latency: spec.measurements (the protocol's
// quantiles, device memory, the GPU's state, noise, speed of light, energy) and
// spec.sourceNative.metrics (every metric field of the record: record/run_record.h).
#include <cmath>
#include <cstdint>
#include <string>

#include "record/run_record.h"

namespace ks {

// Timed: the point has repetitions (a crashed, timed-out or skipped point has none).
inline bool has_timing(const RunRecord& record) { return record.n_repeat > 0; }

// Latencies are whole nanoseconds in the documents.
inline std::int64_t whole_ns(double ns) { return std::llround(ns); }

// The latencies beside the median (which timing.latencyNs holds): the quantiles the protocol asked
// for, or where a record has none (a row from before they were stored, an import), p20 and p80; then
// the other figures the record has. A JSON array, its objects' keys in the order written.
std::string run_measurements(const RunRecord& record);

// The record's metric fields: all of them when the point was timed, else those it has (a peak of
// device memory); non-finite figures have no JSON form and are left out. A JSON object.
std::string native_metrics(const RunRecord& record);

}  // namespace ks
