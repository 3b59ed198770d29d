#include "history/file_medians.h"

#include <cmath>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

#include "store/results_file.h"
#include "view/view.h"

namespace ks::history {
namespace {

// The columns of /runs a history reads.
const std::vector<std::string_view> kColumns{
    "point_id", "kernel",     "implementation", "mode",      "params",
    "status",   "repetition", "n_repeat",       "median_ns", "environment_digest"};

// A point on a device, as its rows in the file come: the latest row that is a timing or did not pass
// decides whether it passed; its passed timings, by repetition, give its median.
struct PointRows {
  SeriesIdentity identity;
  bool passed = false;
  std::vector<std::pair<std::int32_t, double>> passed_medians;
};

// A row that says something of the point's time: a timing, or a row that did not pass.
bool speaks_of_time(const StoredRun& row) { return row.status != "passed" || timed(row); }

// The earliest time a row of an imported file ended (when the tool measured it); "" when none says.
std::string earliest_row_time(const ResultsFile& file) {
  std::string earliest;
  file.scan_runs({"ended_at"}, [&](std::uint64_t, const StoredRun& row) {
    if (!row.ended_at.empty() && (earliest.empty() || row.ended_at < earliest)) earliest = row.ended_at;
  });
  return earliest;
}

}  // namespace

std::string device_of_environment(const std::string& document_json) {
  const nlohmann::json document = nlohmann::json::parse(document_json, nullptr, false);
  if (!document.is_object()) return "";
  const nlohmann::json hardware =
      document.value("spec", nlohmann::json::object()).value("hardware", nlohmann::json::object());
  if (!hardware.is_object()) return "";
  std::string device = hardware.value("product", "");
  const std::string form_factor = hardware.value("formFactor", "");
  if (!form_factor.empty()) device += (device.empty() ? "" : " ") + form_factor;
  return device;
}

FileMedians read_file_medians(HistoryRun run) {
  const ResultsFile file = ResultsFile::open_read_only(run.file);
  const RunInfo info = file.read_info();
  run.labels = info.labels;
  // A file without a sweep text was imported from another tool (docs/import.md).
  const std::string measured = info.sweep_text.empty() ? earliest_row_time(file) : "";
  run.time = measured.empty() ? info.started_at : measured;
  std::unordered_map<std::string, std::string> device_of_digest;
  for (const DigestedDocument& document : file.read_environments())
    device_of_digest.emplace(document.digest, device_of_environment(document.json));

  std::vector<PointRows> points;
  std::unordered_map<std::string, std::size_t> position;  // SeriesIdentity::key() -> its place in `points`
  file.scan_runs(kColumns, [&](std::uint64_t, const StoredRun& row) {
    if (!speaks_of_time(row)) return;
    const auto device = device_of_digest.find(row.cited.environment_digest);
    SeriesIdentity identity{row.point_id, row.kernel,      row.implementation,
                            row.mode,     row.params_json, device == device_of_digest.end() ? "" : device->second};
    const auto [at, first] = position.try_emplace(identity.key(), points.size());
    if (first) points.push_back({std::move(identity), false, {}});
    PointRows& point = points[at->second];
    point.passed = row.status == "passed";
    if (point.passed) point.passed_medians.emplace_back(row.repetition, row.stats.median_ns);
  });

  FileMedians out{std::move(run), {}};
  out.points.reserve(points.size());
  for (PointRows& point : points) {
    const double median =
        point.passed ? summarize_repetitions(std::move(point.passed_medians)).median_of_medians_ns : std::nan("");
    out.points.push_back({std::move(point.identity), median});
  }
  return out;
}

}  // namespace ks::history
