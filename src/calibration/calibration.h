#pragma once
// What each rank's devices measurably do: their memory bandwidth and their arithmetic rate in each
// dtype, measured on the rank itself before its first point by the probe kernels (probes.h), with
// the datasheet's figures beside them where the device is known (datasheets.h). Every point is held
// against its rank's figures (speed_of_light.h), and the ranks against each other.
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ks {

using Json = nlohmann::json;

// The rates of one device: memory bandwidth in GB/s (10⁹ bytes a second, bytes read plus bytes
// written), arithmetic in TFLOP/s by dtype (fp64, fp32, tf32, bf16, fp16, fp8). A rate not known is
// NaN, or absent from `tflops`.
struct DeviceRates {
  double memory_gbps = std::numeric_limits<double>::quiet_NaN();
  std::map<std::string, double> tflops;

  // The rate of `dtype`, if known.
  std::optional<double> tflops_of(const std::string& dtype) const;
};

struct DeviceCalibration {
  std::string backend;  // "cuda" (a GPU) or "cpu"
  std::string device;   // the GPU's name ("NVIDIA H100 80GB HBM3"), or the CPU's model
  std::string uuid;     // a GPU's UUID
  std::string driver;   // a GPU's driver version
  int cores = 0;        // a CPU's: the cores the rank may run on
  // Its last-level cache (a CPU's L3, a GPU's L2); 0 where not known. A point whose bytes fit in it
  // may run from it, faster than memory: its bandwidth is not held against memory's.
  std::int64_t cache_bytes = 0;
  // A CPU's: the ranks of its node that measured it at the same time (each its share of memory and,
  // where they are not bound apart, of the cores). Its figures are one rank's share; one rank
  // alone may reach up to this many times them, so that is the bound beyond which a figure is
  // implausible.
  int measured_beside = 1;
  double copy_gbps = std::numeric_limits<double>::quiet_NaN();
  double triad_gbps = std::numeric_limits<double>::quiet_NaN();
  DeviceRates measured;                  // memory_gbps: the better of copy and triad
  std::optional<DeviceRates> datasheet;  // none: a device the table does not know
  std::vector<std::string> problems;     // probes that did not pass, and why
};

struct RankCalibration {
  int rank = 0;
  std::string host;
  std::string measured_at;  // when the probes ran (UTC, ISO 8601)
  double seconds = 0;       // how long they took
  bool reused = false;      // read from the output folder's calibration cache, not measured by this run
  DeviceCalibration cpu;
  std::optional<DeviceCalibration> gpu;

  // The device a rank is for: its GPU where it has one, else its CPU.
  const DeviceCalibration& primary() const { return gpu ? *gpu : cpu; }
};

// {rank, host, backend, device, uuid, driver, cores, memory_gbps, copy_gbps, triad_gbps, tflops:{dtype:…},
//  datasheet:{memory_gbps, tflops:{…}} or null, problems, seconds, measured_at, reused}: the rank's
// primary device at the top level and, on a rank with a GPU, its CPU as "cpu" (the same device keys).
// A rate not known is null.
Json to_json(const RankCalibration& calibration);
RankCalibration rank_calibration_from_json(const Json& json);

Json to_json(const DeviceRates& rates);
DeviceRates device_rates_from_json(const Json& json);

}  // namespace ks
