#include "store/summary.h"

#include <algorithm>
#include <unordered_set>

namespace ks {

ResultsSummary summarise_results(const ResultsFile& file, const std::vector<PointStatus>& points,
                                 const std::vector<std::string>& planned_point_ids) {
  ResultsSummary summary;
  summary.info = file.read_info();
  summary.rows = file.run_count();
  summary.samples = file.sample_count();
  summary.sessions = file.read_sessions().size();
  std::unordered_set<std::string_view> stored;
  stored.reserve(points.size());
  for (const PointStatus& point : points) {
    ++summary.points_by_status[point.status];
    stored.insert(point.point_id);
  }
  std::unordered_set<std::string_view> planned;
  planned.reserve(planned_point_ids.size());
  planned.insert(planned_point_ids.begin(), planned_point_ids.end());
  for (const std::string& point_id : planned_point_ids)
    if (!stored.contains(point_id)) summary.missing_point_ids.push_back(point_id);
  for (const PointStatus& point : points)
    if (!planned.contains(point.point_id)) summary.unplanned_point_ids.push_back(point.point_id);
  std::sort(summary.unplanned_point_ids.begin(), summary.unplanned_point_ids.end());
  return summary;
}

}  // namespace ks
