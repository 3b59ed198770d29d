#pragma once
// What `kernelsweep status results.h5` reports: a finished or interrupted file's counts by status,
// and the points of its plan that have no row yet.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "store/results_file.h"

namespace ks {

struct ResultsSummary {
  RunInfo info;                                           // ended_at empty: still running, or interrupted
  std::uint64_t rows = 0;                                 // /runs rows (a point rerun after --resume has several)
  std::uint64_t samples = 0;                              // /samples values
  std::uint64_t sessions = 0;                             // 1 + the number of resumes
  std::map<std::string, std::uint64_t> points_by_status;  // each point once, by its latest row
  std::vector<std::string> missing_point_ids;             // planned, without any row (in plan order)
  std::vector<std::string> unplanned_point_ids;           // with rows, but not in the plan given (sorted)
};

// `points` are the file's (ResultsFile::point_statuses, sorted by key), `plan` the keys of the plan
// re-made from info.sweep_text by the caller (the store knows no plans), with their positions in it
// (sorted by sort_by_key). Both sides sorted and walked together: a file of a million points is
// summarised in a fraction of a second.
ResultsSummary summarise_results(const ResultsFile& file, const std::vector<PointStatus>& points,
                                 const PositionedKeys& plan);

}  // namespace ks
