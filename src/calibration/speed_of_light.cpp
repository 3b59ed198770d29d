#include "calibration/speed_of_light.h"

#include <algorithm>
#include <cmath>

namespace ks {
namespace {

void add_flag(std::string& flags, const char* flag) { flags += (flags.empty() ? "" : ",") + std::string(flag); }

bool above(double rate, double figure) { return !std::isnan(figure) && rate > kImplausibleFactor * figure; }

}  // namespace

std::optional<double> roof_tflops(const DeviceRates& rates, const std::string& dtype, const std::string& backend) {
  std::optional<double> best = rates.tflops_of(dtype);
  const auto at_least = [&](const char* other) {
    if (const auto rate = rates.tflops_of(other); rate && (!best || *rate > *best)) best = rate;
  };
  // A GPU may multiply fp32 data in TF32; a CPU computes 16- and 8-bit data in fp32 arithmetic.
  if (dtype == "fp32" && backend == "cuda") at_least("tf32");
  if (backend == "cpu" && dtype != "fp64") at_least("fp32");
  return best;
}

SpeedOfLight speed_of_light(double flops, double bytes, double median_ns, const std::string& dtype,
                            const DeviceCalibration& device) {
  SpeedOfLight out;
  if (std::isnan(median_ns) || median_ns <= 0) return out;
  const double work_flops = std::isnan(flops) ? 0 : flops, work_bytes = std::isnan(bytes) ? 0 : bytes;
  if (work_flops <= 0 && work_bytes <= 0) {
    out.flags = "no-work";
    return out;
  }
  const std::string arithmetic = dtype.empty() ? "fp32" : dtype;
  const double gbps = work_bytes / median_ns, tflops = work_flops / median_ns / 1e3;
  const double bandwidth = device.measured.memory_gbps;
  const double rate = roof_tflops(device.measured, arithmetic, device.backend).value_or(std::nan(""));
  if (!std::isnan(bandwidth) && bandwidth > 0) out.bandwidth_pct = 100 * gbps / bandwidth;
  if (!std::isnan(rate) && rate > 0 && work_flops > 0) out.compute_pct = 100 * tflops / rate;
  // The floor: the longer of moving the bytes at full bandwidth and doing the FLOPs at full rate.
  double floor_ns = 0;
  if (!std::isnan(bandwidth) && bandwidth > 0) floor_ns = std::max(floor_ns, work_bytes / bandwidth);
  if (!std::isnan(rate) && rate > 0) floor_ns = std::max(floor_ns, work_flops / (rate * 1e3));
  if (floor_ns > 0) out.sol_pct = 100 * floor_ns / median_ns;

  double sheet_bandwidth = std::nan(""), sheet_rate = std::nan("");
  if (device.datasheet) {
    sheet_bandwidth = device.datasheet->memory_gbps;
    sheet_rate = roof_tflops(*device.datasheet, arithmetic, device.backend).value_or(std::nan(""));
  }
  // A point whose bytes fit in the cache may run from it: no figure of memory's bounds its bandwidth.
  const bool in_cache = device.cache_bytes > 0 && work_bytes <= static_cast<double>(device.cache_bytes);
  // A CPU measured by several ranks at once gave each its share: one rank alone may reach them all.
  const double alone = std::max(1, device.measured_beside);
  const bool too_many_bytes = !in_cache && (above(gbps, alone * bandwidth) || above(gbps, sheet_bandwidth));
  const bool too_many_flops = work_flops > 0 && (above(tflops, alone * rate) || above(tflops, sheet_rate));
  if (too_many_bytes || too_many_flops) add_flag(out.flags, "implausible");
  if (in_cache) add_flag(out.flags, "in-cache");
  return out;
}

bool has_flag(const std::string& flags, const std::string& flag) {
  std::size_t start = 0;
  while (start <= flags.size()) {
    const std::size_t end = std::min(flags.find(',', start), flags.size());
    if (flags.compare(start, end - start, flag) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace ks
