#pragma once
// One measured point as the cluster stage completes it: which point, where it ran, how it went, its
// aggregates and its raw samples. The rank that measured the point makes it once (from its worker's
// result and the point), and nothing changes it afterwards: rank 0's store, documents and progress
// line only read it. Its fields are declared once, in run_record_fields(): the results file's /runs
// columns, the worker's and the ranks' messages and the documents' metrics are made from that list.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/fields.h"
#include "measure/gpu_state.h"
#include "measure/measurement.h"

namespace ks {

// passed: timed, and the self-check (where run) agreed with the reference.
// failed: timed, but the self-check disagreed.
// error: the kernel threw (CUDA out of memory, launch failure, bad parameters for the device...).
// crashed: the worker process died during the point (signal or exit).
// timeout: the point ran past its timeout_s; the worker was killed.
// skipped: not run here (a cuda implementation on a rank without a GPU), with the reason.
inline constexpr const char* kStatuses[] = {"passed", "failed", "error", "crashed", "timeout", "skipped"};

// Failed, error, crashed or timeout: a point that ran here and did not pass (what a run's summary and
// status list).
inline bool did_not_pass(std::string_view status) { return status != "passed" && status != "skipped"; }

// A figure that was not measured (a point that crashed, timed out, was skipped or failed before it
// was timed): NaN, never 0, so that an average or a plot cannot take it for a measurement.
inline constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

struct RunRecord {
  std::string point_id;
  std::string kernel, implementation, mode;
  std::string params_json;  // canonical JSON of the point's parameters
  std::string status;       // one of kStatuses
  std::string message;
  std::int32_t rank = 0;
  std::string host;
  std::string gpu_uuid;    // empty on a CPU rank
  std::string started_at;  // UTC, ISO 8601 with milliseconds: 2026-11-30T12:00:00.000Z
  std::string ended_at;
  std::int64_t n_warmup = 0, n_repeat = 0;  // 0: the point was not timed
  Statistics stats{kNotMeasured, kNotMeasured, kNotMeasured, kNotMeasured, kNotMeasured, kNotMeasured, kNotMeasured};
  double flops = kNotMeasured, bytes = kNotMeasured;
  double tflops = kNotMeasured, gbps = kNotMeasured;  // from the median
  std::uint64_t device_peak_bytes = 0;
  std::vector<double> samples_ns;   // the raw samples (in /samples, not a /runs column)
  std::vector<Quantile> quantiles;  // the protocol's quantiles of the samples (in /quantiles)
  // The GPU's state just before the first timed repetition and just after the last (NVML); not
  // read on the CPU, nor where NVML is missing.
  GpuState gpu_start, gpu_end;
  std::int32_t repetition = 0;  // which measurement of the point (protocol `repetitions`), from 0
  // How a cold measurement ended (noise, goal met, samples dropped); goal_met -1 for the others.
  NoiseRecord noise;
  // The SM clock over each sample, where it was read (on a GPU), else empty: in /sample_clocks, and
  // in /runs and the documents as its lowest and median value.
  std::vector<double> sample_sm_clock_mhz;
  double sample_sm_clock_min_mhz = kNotMeasured, sample_sm_clock_median_mhz = kNotMeasured;
  // A collective's (kernels/nccl): the bus bandwidth at the median time (nccl-tests' busbw; the
  // algorithm bandwidth is gbps), and the elements of every member's result that differed from the
  // expected values (-1: not counted, as for every other kernel and for a collective not checked).
  double bus_gbps = kNotMeasured;
  std::int64_t wrong_elements = -1;
  // How close the point came to what its device can do (calibration/speed_of_light.h): its rates as
  // percentages of its rank's calibrated figures, its roofline floor as a percentage of its median,
  // and its flags (implausible, no-work, in-cache; drift from its rank's sentinel). NaN and no flags
  // where its rank was not calibrated, for a collective and for a point not timed.
  double bandwidth_pct = kNotMeasured, compute_pct = kNotMeasured, sol_pct = kNotMeasured;
  std::string flags;
  // The GPU's energy per call from its total-energy counter over a window of at least a second
  // (measure/energy.h), the FLOPs that bought per joule, and the window's wall time. NaN on the CPU,
  // where NVML has no counter, for the Python worker's points, and where no window of a second was
  // run (protocol `energy`).
  double joules_per_call = kNotMeasured, gflops_per_joule = kNotMeasured, energy_window_s = kNotMeasured;
};

// The fields of a RunRecord, in /runs column order. R is RunRecord, or a type derived from it whose
// table adds columns of its own (the store's StoredRun).
template <class R = RunRecord> std::vector<Field<R>> run_record_fields() {
  return {
      KS_FIELD(R, "point_id", point_id),
      KS_FIELD(R, "kernel", kernel),
      KS_FIELD(R, "implementation", implementation),
      KS_FIELD(R, "mode", mode),
      KS_FIELD(R, "params", params_json),
      KS_FIELD(R, "status", status),
      KS_FIELD(R, "message", message),
      KS_FIELD(R, "rank", rank),
      KS_FIELD(R, "host", host),
      KS_FIELD(R, "gpu_uuid", gpu_uuid),
      KS_FIELD(R, "started_at", started_at),
      KS_FIELD(R, "ended_at", ended_at),
      KS_METRIC(R, "n_warmup", n_warmup),
      KS_METRIC(R, "n_repeat", n_repeat),
      KS_METRIC(R, "median_ns", stats.median_ns),
      KS_METRIC(R, "p20_ns", stats.p20_ns),
      KS_METRIC(R, "p80_ns", stats.p80_ns),
      KS_METRIC(R, "mean_ns", stats.mean_ns),
      KS_METRIC(R, "min_ns", stats.min_ns),
      KS_METRIC(R, "max_ns", stats.max_ns),
      KS_METRIC(R, "stddev_ns", stats.stddev_ns),
      KS_METRIC(R, "flops", flops),
      KS_METRIC(R, "bytes", bytes),
      KS_METRIC(R, "tflops", tflops),
      KS_METRIC(R, "gbps", gbps),
      KS_METRIC(R, "device_peak_bytes", device_peak_bytes),
  };
}

// The GPU-state fields, in /runs column order after the others (layout 3 on); a figure not read is
// NaN, and its throttle reasons 0.
// A GPU-state figure read at the start and at the end of the point's timed repetitions: its two
// fields, MEMBER_start then MEMBER_end.
#define KS_GPU_STATE_METRICS(R, MEMBER) \
  KS_METRIC(R, #MEMBER "_start", gpu_start.MEMBER), KS_METRIC(R, #MEMBER "_end", gpu_end.MEMBER)
template <class R = RunRecord> std::vector<Field<R>> gpu_state_fields() {
  return {
      KS_GPU_STATE_METRICS(R, sm_clock_mhz),     KS_GPU_STATE_METRICS(R, memory_clock_mhz),
      KS_GPU_STATE_METRICS(R, power_w),          KS_GPU_STATE_METRICS(R, temperature_c),
      KS_GPU_STATE_METRICS(R, throttle_reasons),
  };
}

// The columns layout 4 added after the GPU-state fields: which repetition of its point a run is,
// then what a cold measurement records: noise NaN, noise_goal_met -1 and samples_dropped 0 for the
// other protocols, the SM clock figures NaN where no sample's clock was read.
template <class R = RunRecord> std::vector<Field<R>> repetition_fields() {
  return {KS_METRIC(R, "repetition", repetition)};
}

// What a cold measurement records, in /runs column order after the repetition (layout 4 on):
// noise NaN, noise_goal_met -1 and samples_dropped 0 for the other protocols; the SM clock figures
// NaN where no sample's clock was read.
template <class R = RunRecord> std::vector<Field<R>> noise_fields() {
  return {
      KS_METRIC(R, "noise", noise.noise),
      KS_METRIC(R, "noise_goal_met", noise.goal_met),
      KS_METRIC(R, "samples_dropped", noise.samples_dropped),
      KS_METRIC(R, "sample_sm_clock_min_mhz", sample_sm_clock_min_mhz),
      KS_METRIC(R, "sample_sm_clock_median_mhz", sample_sm_clock_median_mhz),
  };
}

// A collective's figures, in /runs column order after the cold measurement's (layout 5 on): NaN and -1
// for the other kernels.
template <class R = RunRecord> std::vector<Field<R>> collective_fields() {
  return {KS_METRIC(R, "bus_gbps", bus_gbps), KS_METRIC(R, "wrong_elements", wrong_elements)};
}
inline bool is_collective_record(const RunRecord& record) {
  return !std::isnan(record.bus_gbps) || record.wrong_elements >= 0;
}

// How close the point came to its device's speed of light, in /runs column order after the
// collective's (layout 7 on).
template <class R = RunRecord> std::vector<Field<R>> speed_of_light_fields() {
  return {KS_METRIC(R, "bandwidth_pct", bandwidth_pct), KS_METRIC(R, "compute_pct", compute_pct),
          KS_METRIC(R, "sol_pct", sol_pct), KS_FIELD(R, "flags", flags)};
}
// Whether the point was held against its rank's calibration (a figure, or a flag, came of it).
inline bool speed_of_light_was_found(const RunRecord& record) {
  return !std::isnan(record.sol_pct) || !std::isnan(record.bandwidth_pct) || !std::isnan(record.compute_pct) ||
         !record.flags.empty();
}

// The point's energy figures, in /runs column order after the speed of light's (layout 8 on).
template <class R = RunRecord> std::vector<Field<R>> energy_fields() {
  return {KS_METRIC(R, "joules_per_call", joules_per_call), KS_METRIC(R, "gflops_per_joule", gflops_per_joule),
          KS_METRIC(R, "energy_window_s", energy_window_s)};
}
inline bool energy_was_measured(const RunRecord& record) { return !std::isnan(record.joules_per_call); }

// Whether the point was measured under the cold protocol (its noise record is filled).
inline bool noise_was_recorded(const RunRecord& record) { return record.noise.goal_met >= 0; }
// Whether the SM clock was read over its samples (on a GPU, by the C++ worker).
inline bool sample_clocks_were_read(const RunRecord& record) { return !std::isnan(record.sample_sm_clock_min_mhz); }

// Whether the worker read the GPU's state around the point's measurement.
inline bool gpu_state_was_read(const RunRecord& record) {
  return !std::isnan(record.gpu_start.sm_clock_mhz) || !std::isnan(record.gpu_end.sm_clock_mhz);
}

// What slowed the GPU while the point was timed: the slowing reasons (throttle::kSlowing: the power
// cap, the slowdowns) at the start or the end of its timed repetitions, by name; empty where none
// did, and where the GPU's state was not read.
std::string slowed_by(const RunRecord& record);

// Every field, the samples as "samples_ns" and the quantiles as "quantiles" ([[q, ns], ...]; absent
// reads as none, as a worker sends it: the measuring rank adds them); the GPU-state fields where
// they were read (absent: not read): how records travel from a worker to its rank (a figure not
// measured as null). A collective's fields never travel so: the ranks of its gang measure it, not a
// worker. run_record_from_json throws std::runtime_error naming a missing field.
nlohmann::json to_json(const RunRecord& record);
RunRecord run_record_from_json(const nlohmann::json& json);

// The record as bytes: how it travels from a rank to rank 0, both of one build of kernelsweep. Every
// field in the order of its list, numbers as their bytes (NaN stays NaN), strings and vectors after
// their length. Rank 0 receives a record per point; reading JSON took a sixth of its time in a large
// sweep. run_record_from_bytes reads from `offset` and moves it past the record; it throws
// std::runtime_error when the bytes end before the record does.
void append_run_record_bytes(std::string& out, const RunRecord& record);
RunRecord run_record_from_bytes(std::string_view bytes, std::size_t& offset);

}  // namespace ks
