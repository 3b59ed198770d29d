#pragma once
// Each kernel's roofline in `kernelsweep report`: its points' achieved TFLOP/s against their
// arithmetic intensity (FLOPs per byte of a call), under the roofs of the device most of them ran on,
// min(memory bandwidth × intensity, the rate of the points' dtype), as sol_pct holds them
// (calibration/speed_of_light.h).
#include <utility>
#include <vector>

#include "report/report_model.h"
#include "report/report_speed_of_light.h"

namespace ks::report_page {

// The roof over [low, high] (intensities in FLOP/byte): min(memory_gbps × intensity / 1000,
// tflops) in TFLOP/s, at low, at the ridge where it lies strictly between, and at high. A tflops of
// NaN gives the memory roof alone.
std::vector<RooflinePlot::Point> roof_points(double memory_gbps, double tflops, double low, double high);

// The intensity axis around `intensities` (positive): whole decades, with at least a factor of 2 of
// room on either side.
std::pair<double, double> intensity_axis(const std::vector<double>& intensities);

// Gives the section its roofline, or says in section.no_roofline why it has none.
void add_roofline(KernelSection& section, const RankCalibrations& calibrations);

}  // namespace ks::report_page
