#pragma once
// What `kernelsweep report` says about its points' figures against the machine
// (docs/speed-of-light.md). Before anything else: the points whose flags say their figures are not to
// be taken as they stand, and the ranks measurably slower than the ranks with the same device. Then
// each kernel's roofline: its points' achieved TFLOP/s against their arithmetic intensity (FLOPs per
// byte of a call), under the roofs of the device most of them ran on, min(memory bandwidth ×
// intensity, the rate of the points' dtype), as sol_pct holds them (calibration/speed_of_light.h).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "calibration/calibration.h"
#include "report/report_model.h"

namespace ks::report_page {

// Every calibrated rank of the files, by file (as given) and rank.
using RankCalibrations = std::map<std::pair<std::string, std::int32_t>, RankCalibration>;

// The calibrations of the files' /ranks (view/view.h: rank_calibrations).
RankCalibrations rank_calibrations(const std::vector<LoadedFile>& files);

// The device a point ran on, by its rank's calibration: the GPU for a point with a GPU, else the
// CPU. Null when its rank was not calibrated (or has no GPU in its calibration).
const DeviceCalibration* device_of(const ViewRow& row, const RankCalibrations& calibrations);

// The points flagged implausible, then drift, then no-work, each in the order of `view`.
std::vector<FlaggedPoint> flagged_points(const std::vector<ViewRow>& view);

// What a flag says about a point, in one line; empty for a flag that is not listed.
std::string flag_meaning(const std::string& flag);

// Each file's slow ranks (calibration/fleet_health.h: slow_ranks), with the points each measured.
std::vector<SlowRankNote> slow_rank_notes(const std::vector<LoadedFile>& files);

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
