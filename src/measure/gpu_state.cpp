#include "measure/gpu_state.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace ks {
namespace {

// The few NVML entry points used, declared as nvml.h declares them (a C ABI that NVML keeps
// stable): the library is opened at run time, so that no build or machine needs it.
using NvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kClockSm = 1;         // NVML_CLOCK_SM
constexpr int kClockMemory = 2;     // NVML_CLOCK_MEM
constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU

struct Nvml {
  NvmlReturn (*init)() = nullptr;
  const char* (*error_string)(NvmlReturn) = nullptr;
  NvmlReturn (*handle_by_uuid)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*clock_info)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*power_usage)(NvmlDevice, unsigned*) = nullptr;  // milliwatts
  NvmlReturn (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*event_reasons)(NvmlDevice, unsigned long long*) = nullptr;
  // Optional: Volta and later, and drivers since 2017. nullptr where the library lacks it.
  NvmlReturn (*total_energy)(NvmlDevice, unsigned long long*) = nullptr;  // millijoules
};

template <class Function> bool find(void* library, const char* name, Function& out) {
  out = reinterpret_cast<Function>(dlsym(library, name));
  return out != nullptr;
}

// Opened once per process and never closed (NVML keeps its own state until the process ends).
const Nvml* load_nvml(std::string& why_not) {
  static std::string problem;
  static const Nvml* nvml = []() -> const Nvml* {
    const char* chosen = std::getenv("KERNELSWEEP_NVML_LIBRARY");
    const std::string name = chosen && *chosen ? chosen : "libnvidia-ml.so.1";
    void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      problem = fmt::format("NVML is not available ({} could not be loaded: {})", name, dlerror());
      return nullptr;
    }
    static Nvml loaded;
    // The reasons' function was renamed in CUDA 12 (ClocksThrottleReasons to ClocksEventReasons);
    // drivers export both, older ones only the first name.
    const bool complete = find(library, "nvmlInit_v2", loaded.init) &&
                          find(library, "nvmlErrorString", loaded.error_string) &&
                          find(library, "nvmlDeviceGetHandleByUUID", loaded.handle_by_uuid) &&
                          find(library, "nvmlDeviceGetClockInfo", loaded.clock_info) &&
                          find(library, "nvmlDeviceGetPowerUsage", loaded.power_usage) &&
                          find(library, "nvmlDeviceGetTemperature", loaded.temperature) &&
                          (find(library, "nvmlDeviceGetCurrentClocksEventReasons", loaded.event_reasons) ||
                           find(library, "nvmlDeviceGetCurrentClocksThrottleReasons", loaded.event_reasons));
    find(library, "nvmlDeviceGetTotalEnergyConsumption", loaded.total_energy);
    if (!complete) {
      problem = fmt::format("NVML is not usable ({} lacks a function kernelsweep reads with)", name);
      return nullptr;
    }
    if (const NvmlReturn status = loaded.init(); status != kNvmlSuccess) {
      problem = fmt::format("NVML did not initialise: {}", loaded.error_string(status));
      return nullptr;
    }
    return &loaded;
  }();
  why_not = problem;
  return nvml;
}

class NvmlReader final : public GpuStateReader {
 public:
  NvmlReader(const Nvml& nvml, NvmlDevice device) : nvml_(nvml), device_(device) {}

  // A figure NVML cannot give (a GPU without a power sensor, say) stays not read.
  GpuState read() const override {
    GpuState state;
    unsigned value = 0;
    if (nvml_.clock_info(device_, kClockSm, &value) == kNvmlSuccess) state.sm_clock_mhz = value;
    if (nvml_.clock_info(device_, kClockMemory, &value) == kNvmlSuccess) state.memory_clock_mhz = value;
    if (nvml_.power_usage(device_, &value) == kNvmlSuccess) state.power_w = value / 1000.0;
    if (nvml_.temperature(device_, kTemperatureGpu, &value) == kNvmlSuccess) state.temperature_c = value;
    unsigned long long reasons = 0;
    if (nvml_.event_reasons(device_, &reasons) == kNvmlSuccess) state.throttle_reasons = reasons;
    return state;
  }

  // A GPU that does not keep the counter answers NVML_ERROR_NOT_SUPPORTED: not read.
  double total_energy_mj() const override {
    unsigned long long millijoules = 0;
    if (!nvml_.total_energy || nvml_.total_energy(device_, &millijoules) != kNvmlSuccess) return GpuState::kNotRead;
    return static_cast<double>(millijoules);
  }

 private:
  const Nvml& nvml_;
  NvmlDevice device_;
};

}  // namespace

std::string throttle_reason_names(std::uint64_t mask) {
  static const std::pair<std::uint64_t, const char*> kNames[] = {
      {throttle::kGpuIdle, "gpu_idle"},
      {throttle::kApplicationsClocksSetting, "applications_clocks_setting"},
      {throttle::kSwPowerCap, "sw_power_cap"},
      {throttle::kHwSlowdown, "hw_slowdown"},
      {throttle::kSyncBoost, "sync_boost"},
      {throttle::kSwThermalSlowdown, "sw_thermal_slowdown"},
      {throttle::kHwThermalSlowdown, "hw_thermal_slowdown"},
      {throttle::kHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {throttle::kDisplayClockSetting, "display_clock_setting"}};
  std::string names;
  const auto add = [&names](std::string_view name) {
    if (!names.empty()) names += ',';
    names += name;
  };
  std::uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if (mask & bit) add(name);
  }
  if (mask & ~known) add(fmt::format("{:#x}", mask & ~known));
  return names;
}

std::unique_ptr<GpuStateReader> GpuStateReader::open(const std::string& gpu_uuid, std::string& why_not) {
  const Nvml* nvml = load_nvml(why_not);
  if (!nvml) return nullptr;
  NvmlDevice device = nullptr;
  if (const NvmlReturn status = nvml->handle_by_uuid(gpu_uuid.c_str(), &device); status != kNvmlSuccess) {
    why_not = fmt::format("NVML does not know GPU {}: {}", gpu_uuid, nvml->error_string(status));
    return nullptr;
  }
  return std::make_unique<NvmlReader>(*nvml, device);
}

}  // namespace ks
