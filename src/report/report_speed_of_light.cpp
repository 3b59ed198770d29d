#include "report/report_speed_of_light.h"

#include <exception>

#include "calibration/speed_of_light.h"

namespace ks::report_page {

RankCalibrations rank_calibrations(const std::vector<LoadedFile>& files) {
  RankCalibrations out;
  for (const LoadedFile& file : files)
    for (RankCalibration& calibration : ks::rank_calibrations(file.ranks))
      out.insert_or_assign({file.path, calibration.rank}, std::move(calibration));
  return out;
}

const DeviceCalibration* device_of(const ViewRow& row, const RankCalibrations& calibrations) {
  const auto found = calibrations.find({row.file, row.run.rank});
  if (found == calibrations.end()) return nullptr;
  if (row.run.gpu_uuid.empty()) return &found->second.cpu;
  return found->second.gpu ? &*found->second.gpu : nullptr;
}

std::string flag_meaning(const std::string& flag) {
  if (flag == "implausible")
    return "a rate above 1.5 times the device's calibrated or datasheet figure: the work model counts what the code "
           "does not do, or the timer missed the work; left out of every speed-up and fraction";
  if (flag == "no-work") return "declares no FLOPs and no bytes: there is no rate to hold against the device";
  if (flag == "drift")
    return "measured after its rank's sentinel found the device more than 5% below its calibration: it may be slow "
           "for the device's sake, not the kernel's";
  return "";
}

std::vector<FlaggedPoint> flagged_points(const std::vector<ViewRow>& view) {
  std::vector<FlaggedPoint> out;
  // in-cache is not listed: it says why a small point's bandwidth may exceed memory's, and puts none
  // of its figures in doubt (its FLOPs are still held to the device's rate). The points tables show
  // it in their flags column.
  for (const char* flag : {"implausible", "drift", "no-work"})
    for (const ViewRow& row : view)
      if (has_flag(row.run.flags, flag)) out.push_back({&row, flag, flag_meaning(flag)});
  return out;
}

std::vector<SlowRankNote> slow_rank_notes(const std::vector<LoadedFile>& files) {
  std::vector<SlowRankNote> out;
  for (const LoadedFile& file : files) {
    // Within a file only: the ranks of two runs are different processes, whatever their numbers.
    for (SlowRank& slow : slow_ranks(ks::rank_calibrations(file.ranks))) {
      const auto points = file.points_by_rank.find(slow.rank);
      out.push_back({file.path, std::move(slow), points == file.points_by_rank.end() ? 0 : points->second});
    }
  }
  return out;
}

}  // namespace ks::report_page
