#pragma once
// What `kernelsweep report` says before anything else about its points' figures against the
// machine (docs/speed-of-light.md): the points whose flags say their figures are not to be taken as
// they stand, and the ranks measurably slower than the ranks with the same device.
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

}  // namespace ks::report_page
