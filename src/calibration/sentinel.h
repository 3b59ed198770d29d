#pragma once
// The sentinel: during a long run, each rank measures a few of its calibration's probes again every
// so often (`run --sentinel-every`), so that a GPU that heats up, throttles or loses its clocks
// mid-sweep is caught. A figure further below the rank's calibration than its tolerance
// (fleet_health.h, slow_fraction) is drift: the rank says so (rank 0 logs it) and flags `drift` on
// every point it measures from then on, until a later sentinel finds the device back within them.
#include <chrono>
#include <string>
#include <vector>

#include "calibration/calibration.h"
#include "calibration/fleet_health.h"
#include "calibration/probes.h"

namespace ks {

class Sentinel {
 public:
  using Clock = std::chrono::steady_clock;

  Sentinel() = default;  // off: never due
  // A sentinel every `every` (0: off) for a rank whose primary device `calibrated` is; the first is
  // due `every` after now.
  Sentinel(std::chrono::duration<double> every, DeviceCalibration calibrated);

  bool due(Clock::time_point now = Clock::now()) const;
  bool drifting() const { return !drift_.empty(); }

  // Measures the sentinel's probes with `run` and holds them against the calibration. Returns the
  // line to log when the device drifted or came back since the last sentinel (naming `who`), else "".
  std::string check(const Registry& registry, const ProbeRunner& run, const std::string& who);

  // Takes a sentinel's figures (the probes' rates) and returns what check() returns for them.
  std::string note(const DeviceCalibration& measured, const std::string& who);

 private:
  std::chrono::duration<double> every_{0};
  DeviceCalibration calibrated_;
  Clock::time_point next_{};
  std::vector<SlowFigure> drift_;
};

// "memory_gbps 2610 is 12.4% below 2980"; figures joined by "; ".
std::string describe_drift(const std::vector<SlowFigure>& figures);

// `run --sentinel-every`: "10m", "90s", "1h", a bare number of seconds, or "off"/"0". Throws
// std::invalid_argument naming the text.
std::chrono::duration<double> parse_sentinel_interval(const std::string& text);

}  // namespace ks
