#include "calibration/sentinel.h"

#include <stdexcept>

#include <fmt/format.h>

namespace ks {

Sentinel::Sentinel(std::chrono::duration<double> every, DeviceCalibration calibrated)
    : every_(every),
      calibrated_(std::move(calibrated)),
      next_(Clock::now() + std::chrono::duration_cast<Clock::duration>(every)) {}

bool Sentinel::due(Clock::time_point now) const { return every_.count() > 0 && now >= next_; }

std::string Sentinel::check(const Registry& registry, const ProbeRunner& run, const std::string& who) {
  const Backend backend = calibrated_.backend == "cuda" ? Backend::cuda : Backend::cpu;
  const DeviceCalibration measured = measure_probes(backend, sentinel_probes(backend, registry), registry, run);
  next_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(every_);
  return note(measured, who);
}

std::string Sentinel::note(const DeviceCalibration& measured, const std::string& who) {
  const bool was_drifting = drifting();
  drift_ = figures_below(calibrated_.backend, figures_of(calibrated_), figures_of(measured));
  if (drifting())
    return fmt::format("{}: drift: {} (its calibration's figures); its points are flagged drift until it is back", who,
                       describe_drift(drift_));
  if (was_drifting)
    return fmt::format("{}: back within the tolerances of its calibration: its points are no longer flagged drift",
                       who);
  return "";
}

std::string describe_drift(const std::vector<SlowFigure>& figures) {
  std::string text;
  for (const SlowFigure& f : figures)
    text += fmt::format("{}{} {:.4g} is {:.1f}% below {:.4g}", text.empty() ? "" : "; ", f.figure, f.value, f.below_pct,
                        f.median);
  return text;
}

std::chrono::duration<double> parse_sentinel_interval(const std::string& text) {
  if (text == "off" || text == "0") return std::chrono::duration<double>(0);
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) { used = 0; }
  const std::string unit = used ? text.substr(used) : "";
  const double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : -1;
  if (!used || scale < 0 || !(value >= 0))
    throw std::invalid_argument(
        fmt::format("--sentinel-every {}: give a duration such as 10m, 90s or 1h, or off", text));
  return std::chrono::duration<double>(value * scale);
}

}  // namespace ks
