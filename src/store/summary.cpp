#include "store/summary.h"

#include <algorithm>

namespace ks {
namespace {

// Keys with a number each (a position in the plan, a row of the file), sorted by key.
using NumberedKeys = std::vector<std::pair<PointKey, std::uint64_t>>;

void sort_by_key(NumberedKeys& keys) {
  std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return PointKeyLess()(a.first, b.first); });
}

// The ids of the points at `rows` (sorted), read from the file: a point's key does not give back an
// id that is not a SHA-256 (a row of another tool's results).
std::vector<std::string> ids_at_rows(const ResultsFile& file, const std::vector<std::uint64_t>& rows) {
  std::vector<std::string> ids;
  if (rows.empty()) return ids;
  file.scan_statuses([&](std::uint64_t row, const std::string& point_id, const std::string&) {
    if (std::binary_search(rows.begin(), rows.end(), row)) ids.push_back(point_id);
  });
  return ids;
}

}  // namespace

ResultsSummary summarise_results(const ResultsFile& file, const std::vector<PointStatus>& points,
                                 const std::vector<PointKey>& planned) {
  ResultsSummary summary;
  summary.info = file.read_info();
  summary.rows = file.run_count();
  summary.samples = file.sample_count();
  summary.sessions = file.read_sessions().size();
  // Both sides sorted by key and walked together: what one has and the other lacks, in time linear
  // in the points once sorted (a binary search per point would miss the cache at every step).
  NumberedKeys stored, plan;
  stored.reserve(points.size());
  for (const PointStatus& point : points) {
    ++summary.points_by_status[std::string(point.status)];
    stored.emplace_back(point.key, point.first_row);
  }
  plan.reserve(planned.size());
  for (std::uint64_t position = 0; position < planned.size(); ++position) plan.emplace_back(planned[position], position);
  sort_by_key(stored);
  sort_by_key(plan);
  std::vector<std::uint64_t> missing_positions, unplanned_rows;
  for (std::size_t i = 0, j = 0; i < plan.size() || j < stored.size();) {
    if (j == stored.size() || (i < plan.size() && PointKeyLess()(plan[i].first, stored[j].first))) {
      missing_positions.push_back(plan[i++].second);
    } else if (i == plan.size() || PointKeyLess()(stored[j].first, plan[i].first)) {
      unplanned_rows.push_back(stored[j++].second);
    } else {
      ++i, ++j;
    }
  }
  std::sort(missing_positions.begin(), missing_positions.end());  // in plan order
  for (std::uint64_t position : missing_positions) summary.missing_point_ids.push_back(point_key_hex(planned[position]));
  std::sort(unplanned_rows.begin(), unplanned_rows.end());
  summary.unplanned_point_ids = ids_at_rows(file, unplanned_rows);
  std::sort(summary.unplanned_point_ids.begin(), summary.unplanned_point_ids.end());
  return summary;
}

}  // namespace ks
