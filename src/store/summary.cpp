#include "store/summary.h"

#include <algorithm>

namespace ks {
namespace {

// The ids of the points at `rows` (sorted), read from the file: a point's key does not give back an
// id that is not a SHA-256 (a row of another tool's results).
std::vector<std::string> ids_at_rows(const ResultsFile& file, const std::vector<std::uint64_t>& rows) {
  std::vector<std::string> ids;
  if (rows.empty()) return ids;
  file.scan_statuses([&](std::uint64_t row, const std::string& point_id, std::int32_t, const std::string&) {
    if (std::binary_search(rows.begin(), rows.end(), row)) ids.push_back(point_id);
  });
  return ids;
}

}  // namespace

ResultsSummary summarise_results(const ResultsFile& file, const std::vector<PointStatus>& points,
                                 const PositionedKeys& plan) {
  ResultsSummary summary;
  summary.info = file.read_info();
  summary.rows = file.run_count();
  summary.samples = file.sample_count();
  summary.sessions = file.read_sessions().size();
  for (const PointStatus& point : points) ++summary.points_by_status[std::string(point.status)];
  // What one side has and the other lacks, in time linear in the points (a binary search per point
  // would miss the cache at every step).
  std::vector<std::pair<std::uint64_t, PointKey>> missing;  // (position in the plan, key)
  std::vector<std::uint64_t> unplanned_rows;
  for (std::size_t i = 0, j = 0; i < plan.size() || j < points.size();) {
    if (j == points.size() || (i < plan.size() && PointKeyLess()(plan[i].first, points[j].key))) {
      missing.emplace_back(plan[i].second, plan[i].first);
      ++i;
    } else if (i == plan.size() || PointKeyLess()(points[j].key, plan[i].first)) {
      unplanned_rows.push_back(points[j++].first_row);
    } else {
      ++i, ++j;
    }
  }
  std::sort(missing.begin(), missing.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [position, key] : missing) summary.missing_point_ids.push_back(point_key_hex(key));
  std::sort(unplanned_rows.begin(), unplanned_rows.end());
  summary.unplanned_point_ids = ids_at_rows(file, unplanned_rows);
  std::sort(summary.unplanned_point_ids.begin(), summary.unplanned_point_ids.end());
  return summary;
}

}  // namespace ks
