#include "store/summary.h"

#include <set>

namespace ks {

ResultsSummary summarise_results(const ResultsFile& file, const std::vector<std::string>& planned_point_ids) {
  ResultsSummary summary;
  summary.info = file.read_info();
  summary.rows = file.run_count();
  summary.samples = file.sample_count();
  summary.sessions = file.read_sessions().size();
  const std::map<std::string, std::string> latest = file.latest_status_by_point();
  for (const auto& [point_id, status] : latest) ++summary.points_by_status[status];
  const std::set<std::string> planned(planned_point_ids.begin(), planned_point_ids.end());
  for (const std::string& point_id : planned_point_ids) {
    if (!latest.contains(point_id)) summary.missing_point_ids.push_back(point_id);
  }
  for (const auto& [point_id, status] : latest) {
    if (!planned.contains(point_id)) summary.unplanned_point_ids.push_back(point_id);
  }
  return summary;
}

}  // namespace ks
