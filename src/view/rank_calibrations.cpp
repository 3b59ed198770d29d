#include "view/rank_calibrations.h"

#include <exception>
#include <map>
#include <utility>

namespace ks {

std::vector<RankCalibration> rank_calibrations(const std::vector<RankInfo>& ranks) {
  std::map<std::int32_t, RankCalibration> latest;
  for (const RankInfo& rank : ranks) {
    if (rank.calibration.empty()) continue;
    try {
      RankCalibration calibration = rank_calibration_from_json(Json::parse(rank.calibration));
      calibration.rank = rank.rank;  // /ranks' own number is the one the points carry
      latest.insert_or_assign(rank.rank, std::move(calibration));
    } catch (const std::exception&) {
      // A calibration that does not parse holds nothing to measure against: the rank counts as not
      // calibrated, and status and the report still say everything else.
    }
  }
  std::vector<RankCalibration> out;
  for (auto& [rank, calibration] : latest) out.push_back(std::move(calibration));
  return out;
}

}  // namespace ks
