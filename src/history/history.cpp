#include "history/history.h"

#include <optional>
#include <utility>

namespace ks::history {

bool series_matches(const RowFilter& filter, const SeriesIdentity& identity, const nlohmann::json& params) {
  return filter.matches([&](const std::string& key) -> std::optional<std::string> {
    if (key == "kernel") return identity.kernel;
    if (key == "implementation") return identity.implementation;
    if (key == "mode") return identity.mode;
    if (key == "point") return identity.point_id;
    if (key == "device") return identity.device;
    return parameter_text(params, key);
  });
}

History read_history(const std::vector<std::string>& arguments, const RunOrder& order, const RowFilter& filter) {
  std::vector<HistoryRun> runs = history_files(arguments);
  SeriesTable table(runs.size(), [&](const SeriesIdentity& identity, const nlohmann::json& params) {
    return series_matches(filter, identity, params);
  });
  for (std::size_t i = 0; i < runs.size(); ++i) {
    FileMedians file = read_file_medians(std::move(runs[i]));
    runs[i] = std::move(file.run);
    table.add(i, std::move(file.points));
  }
  const std::vector<std::size_t> positions = run_order(runs, order);
  History history{order, {}, table.take(positions)};
  for (std::size_t i : positions) history.runs.push_back(std::move(runs[i]));
  return history;
}

}  // namespace ks::history
