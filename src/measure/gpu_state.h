#pragma once
// The GPU's state around a measurement: its SM and memory clocks, power draw, temperature, and the
// reasons NVML gives for clocks held below their maximum (the power cap, a thermal slowdown, ...).
// Read through NVML, which ships with the driver and is loaded at run time: a machine without it
// measures all the same, with the state not recorded. Nothing here changes any GPU setting.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

namespace ks {

// NVML's clock event ("throttle") reasons, the bits of nvmlDeviceGetCurrentClocksEventReasons as
// nvml.h defines them.
namespace throttle {
inline constexpr std::uint64_t kGpuIdle = 0x1;
inline constexpr std::uint64_t kApplicationsClocksSetting = 0x2;
inline constexpr std::uint64_t kSwPowerCap = 0x4;
inline constexpr std::uint64_t kHwSlowdown = 0x8;
inline constexpr std::uint64_t kSyncBoost = 0x10;
inline constexpr std::uint64_t kSwThermalSlowdown = 0x20;
inline constexpr std::uint64_t kHwThermalSlowdown = 0x40;
inline constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;
inline constexpr std::uint64_t kDisplayClockSetting = 0x100;
// The reasons that slow a kernel down: the power cap and the slowdowns (thermal, power brake, the
// hardware's own). Idle, sync boost and the clock settings say nothing about a measurement's pace.
inline constexpr std::uint64_t kSlowing =
    kSwPowerCap | kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown;
}  // namespace throttle

// The reasons of `mask` by name ("sw_power_cap,hw_thermal_slowdown"), unknown bits as hex; "" for 0.
std::string throttle_reason_names(std::uint64_t mask);

// Whether a point was measured while its GPU was slowed: a slowing reason at the start or the end.
inline bool measured_while_slowed(std::uint64_t reasons_start, std::uint64_t reasons_end) {
  return ((reasons_start | reasons_end) & throttle::kSlowing) != 0;
}

struct GpuState {
  static constexpr double kNotRead = std::numeric_limits<double>::quiet_NaN();
  double sm_clock_mhz = kNotRead;
  double memory_clock_mhz = kNotRead;
  double power_w = kNotRead;
  double temperature_c = kNotRead;
  std::uint64_t throttle_reasons = 0;  // throttle:: bits; 0 also where nothing was read
};

// One GPU's state through NVML. Each read() asks NVML for the five figures (a few microseconds).
// total_energy_mj() is the GPU's energy counter (measure/energy.h says how it is used).
class GpuStateReader {
 public:
  // The reader of the GPU with this UUID ("GPU-..."), or nullptr with the reason in `why_not`: NVML
  // not found (KERNELSWEEP_NVML_LIBRARY names another library than libnvidia-ml.so.1), not
  // initialised, or no such GPU.
  static std::unique_ptr<GpuStateReader> open(const std::string& gpu_uuid, std::string& why_not);
  virtual ~GpuStateReader() = default;
  virtual GpuState read() const = 0;
  // Millijoules the GPU has used since the driver was loaded; NaN where NVML has no such counter
  // (before Volta, or a driver without the function).
  virtual double total_energy_mj() const { return GpuState::kNotRead; }
};

}  // namespace ks
