#pragma once
// How close a point came to what its device can do, and whether its figures can be believed. Against
// the calibration of the device it ran on (its rank's GPU for a CUDA implementation, its CPU for a
// CPU one):
//
//   bandwidth_pct  its bytes a second as a percentage of the device's memory bandwidth
//   compute_pct    its FLOPs a second as a percentage of the device's rate in the point's dtype
//   sol_pct        its roofline floor, max(bytes / bandwidth, FLOPs / rate), as a percentage of its
//                  median time: 100 is the speed of light
//   flags          implausible: a rate above 1.5 times the measured figure or the datasheet's (a wrong
//                  work model, or a timer that missed the work; a CPU measured by N ranks at once:
//                  N times its figure); no-work: the point declares no work;
//                  in-cache: its bytes fit in the device's last-level cache, from which it may run
//                  faster than memory: its bandwidth (and a bandwidth_pct above 100) is not
//                  implausible; its FLOPs still are held to the device's rate
//                  (a rank's sentinel adds drift: calibration/sentinel.h)
//
// The rate of a dtype is the best the device has for that dtype's data: fp32 data counts TF32's rate
// on a GPU (a kernel may use it), bf16, fp16 and fp8 data count fp32's on a CPU (which computes them
// in fp32); a dtype the point does not say is taken as fp32. Collectives are
// left out: their figures are link bandwidths, not the device's.
#include <limits>
#include <string>

#include "calibration/calibration.h"

namespace ks {

inline constexpr double kImplausibleFactor = 1.5;

struct SpeedOfLight {
  double bandwidth_pct = std::numeric_limits<double>::quiet_NaN();
  double compute_pct = std::numeric_limits<double>::quiet_NaN();
  double sol_pct = std::numeric_limits<double>::quiet_NaN();
  std::string flags;  // "implausible", "no-work", "in-cache", comma-separated; empty when none
};

// A point's figures from its work of one call (`flops`, `bytes`; NaN: not counted), its median time and
// its dtype, against `device`. A point not timed (median NaN) gets none; one with no work only
// `no-work`.
SpeedOfLight speed_of_light(double flops, double bytes, double median_ns, const std::string& dtype,
                            const DeviceCalibration& device);

// Whether `flags` holds `flag`.
bool has_flag(const std::string& flags, const std::string& flag);

// The best rate that `dtype` data has on `rates` (fp32: fp32 or tf32), if known.
std::optional<double> roof_tflops(const DeviceRates& rates, const std::string& dtype, const std::string& backend);

}  // namespace ks
