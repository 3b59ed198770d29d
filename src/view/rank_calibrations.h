#pragma once
// The calibrations a results file keeps in /ranks, read back: what `status` and the report hold each
// rank's figures against (calibration/fleet_health.h).
#include <vector>

#include "calibration/calibration.h"
#include "store/results_file.h"

namespace ks {

// Each rank's latest row (a resumed run adds a row where the rank measured again, or reused what it
// kept); a rank not calibrated, or whose calibration does not parse, is left out. In rank order.
std::vector<RankCalibration> rank_calibrations(const std::vector<RankInfo>& ranks);

}  // namespace ks
