#include "kernelindex/kernelindex.h"

#include <cmath>
#include <type_traits>

#include <fmt/format.h>

#include "common/json_text.h"

namespace ks {
namespace {

// {"metric":...,"statistic":...,"unit":...,"value":...}: its keys are in order as written.
std::string measurement(std::string_view metric, std::string_view statistic, std::string_view unit,
                        const std::string& value) {
  std::string out = "{\"metric\":";
  out += json_string(metric);
  out += ",\"statistic\":";
  out += json_string(statistic);
  out += ",\"unit\":";
  out += json_string(unit);
  out += ",\"value\":";
  out += value;
  out += '}';
  return out;
}

std::string latency_measurement(std::string_view statistic, double ns) {
  return measurement("latency", statistic, "ns", json_number(whole_ns(ns)));
}

// A figure where it was read (not NaN).
void add_where_read(std::vector<std::string>& measurements, std::string_view metric, std::string_view statistic,
                    std::string_view unit, double value) {
  if (!std::isnan(value)) measurements.push_back(measurement(metric, statistic, unit, json_number(value)));
}

// The GPU's state at the start and the end of the timed repetitions, each figure where it was read.
void add_gpu_state(std::vector<std::string>& measurements, const RunRecord& record) {
  const auto add = [&](const char* metric, const char* unit, double start, double end) {
    add_where_read(measurements, metric, "start", unit, start);
    add_where_read(measurements, metric, "end", unit, end);
  };
  add("sm_clock", "MHz", record.gpu_start.sm_clock_mhz, record.gpu_end.sm_clock_mhz);
  add("memory_clock", "MHz", record.gpu_start.memory_clock_mhz, record.gpu_end.memory_clock_mhz);
  add("power", "W", record.gpu_start.power_w, record.gpu_end.power_w);
  add("temperature", "C", record.gpu_start.temperature_c, record.gpu_end.temperature_c);
}

// How a cold measurement ended: its noise (the samples' relative standard deviation) and the samples
// dropped because the GPU was slowed; and the SM clock the samples ran at, where it was read.
void add_noise(std::vector<std::string>& measurements, const RunRecord& record) {
  if (noise_was_recorded(record)) {
    add_where_read(measurements, "noise", "relative_stddev", "ratio", record.noise.noise);
    measurements.push_back(
        measurement("samples_dropped", "count", "samples", json_number(record.noise.samples_dropped)));
  }
  add_where_read(measurements, "sm_clock", "min_over_samples", "MHz", record.sample_sm_clock_min_mhz);
  add_where_read(measurements, "sm_clock", "median_over_samples", "MHz", record.sample_sm_clock_median_mhz);
}

// How close the point came to its device's speed of light (docs/speed-of-light.md), in percent, where
// its rank was calibrated.
void add_speed_of_light(std::vector<std::string>& measurements, const RunRecord& record) {
  add_where_read(measurements, "speed_of_light", "roofline", "percent", record.sol_pct);
  add_where_read(measurements, "speed_of_light", "memory_bandwidth", "percent", record.bandwidth_pct);
  add_where_read(measurements, "speed_of_light", "compute", "percent", record.compute_pct);
}

// The GPU's energy per call, what its FLOPs bought per joule and the window the figure came from
// (docs/speed-of-light.md, "Energy"), where one of at least a second was measured.
void add_energy(std::vector<std::string>& measurements, const RunRecord& record) {
  if (!energy_was_measured(record)) return;
  measurements.push_back(measurement("energy", "per_call", "J", json_number(record.joules_per_call)));
  add_where_read(measurements, "energy_efficiency", "per_call", "GFLOP/J", record.gflops_per_joule);
  measurements.push_back(measurement("energy_window", "wall_time", "s", json_number(record.energy_window_s)));
}

// A quantile's name: p20 for 0.2, p2.5 for 0.025, p99.9 for 0.999.
std::string quantile_name(double q) { return fmt::format("p{:g}", q * 100); }

const std::vector<Field<RunRecord>>& metric_fields() {
  static const std::vector<Field<RunRecord>> metrics = [] {
    std::vector<Field<RunRecord>> out;
    for (auto& field : run_record_fields())
      if (field.metric) out.push_back(field);
    return out;
  }();
  return metrics;
}

}  // namespace

std::string run_measurements(const RunRecord& record) {
  std::vector<std::string> out;
  if (has_timing(record) && record.quantiles.empty()) {
    out.push_back(latency_measurement("p20", record.stats.p20_ns));
    out.push_back(latency_measurement("p80", record.stats.p80_ns));
  } else if (has_timing(record)) {
    for (const Quantile& q : record.quantiles)
      if (q.quantile != 0.5) out.push_back(latency_measurement(quantile_name(q.quantile), q.value_ns));
  }
  if (record.device_peak_bytes > 0)
    out.push_back(measurement("device_memory", "peak", "bytes", json_number(record.device_peak_bytes)));
  add_gpu_state(out, record);
  add_noise(out, record);
  add_speed_of_light(out, record);
  add_energy(out, record);
  return json_array(out);
}

std::string native_metrics(const RunRecord& record) {
  JsonObjectText metrics;
  // The finite figures of `fields`, those that are 0 too where `zeros`.
  const auto add = [&](const std::vector<Field<RunRecord>>& fields, bool zeros) {
    for_each_field(record, fields, [&](const Field<RunRecord>& field, const auto& value) {
      if constexpr (std::is_arithmetic_v<std::decay_t<decltype(value)>>) {
        if ((zeros || value != 0) && std::isfinite(static_cast<double>(value))) metrics.add_number(field.name, value);
      }
    });
  };
  add(metric_fields(), has_timing(record));
  static const std::vector<Field<RunRecord>> gpu_fields = gpu_state_fields();
  static const std::vector<Field<RunRecord>> cold_fields = noise_fields();
  static const std::vector<Field<RunRecord>> collective = collective_fields();
  if (gpu_state_was_read(record)) add(gpu_fields, true);
  if (noise_was_recorded(record) || sample_clocks_were_read(record)) add(cold_fields, true);
  if (is_collective_record(record)) add(collective, true);
  return metrics.text();
}

}  // namespace ks
