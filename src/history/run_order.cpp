#include "history/run_order.h"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "view/view.h"

namespace ks::history {
namespace {

namespace fs = std::filesystem;

// A label's value as --order label:KEY compares it: a number where the text is one.
nlohmann::json comparable(const std::string& text) {
  const nlohmann::json number = nlohmann::json::parse(text, nullptr, false);
  return number.is_number() ? number : nlohmann::json(text);
}

std::vector<std::string> results_files_below(const fs::path& folder) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(folder))
    if (entry.is_regular_file() && entry.path().extension() == ".h5") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::string RunOrder::text() const {
  switch (by) {
    case By::given: return "given";
    case By::time: return "time";
    case By::label: return "label:" + label;
  }
  return "";
}

RunOrder parse_run_order(const std::string& text) {
  if (text == "given") return {};
  if (text == "time") return {RunOrder::By::time, ""};
  if (text.starts_with("label:") && text.size() > 6) return {RunOrder::By::label, text.substr(6)};
  throw HistoryInputError(fmt::format("--order '{}': expected given, time or label:KEY", text));
}

std::string HistoryRun::name() const { return labels.empty() ? time : labels_text(labels); }

std::vector<HistoryRun> history_files(const std::vector<std::string>& arguments) {
  std::vector<HistoryRun> runs;
  for (std::size_t a = 0; a < arguments.size(); ++a) {
    const fs::path path = arguments[a];
    std::error_code error;
    if (!fs::exists(path, error)) throw HistoryInputError(fmt::format("{}: no such file or folder", arguments[a]));
    if (!fs::is_directory(path)) {
      runs.push_back({arguments[a], a, "", {}});
      continue;
    }
    const std::vector<std::string> files = results_files_below(path);
    if (files.empty()) throw HistoryInputError(fmt::format("{}: a folder without results files (*.h5)", arguments[a]));
    for (const std::string& file : files) runs.push_back({file, a, "", {}});
  }
  return runs;
}

std::vector<std::size_t> run_order(const std::vector<HistoryRun>& runs, const RunOrder& order) {
  std::vector<nlohmann::json> values(runs.size());
  if (order.by == RunOrder::By::label) {
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const auto found = runs[i].labels.find(order.label);
      if (found == runs[i].labels.end())
        throw HistoryInputError(fmt::format("{}: no label {} (--order label:{}); its labels: {}", runs[i].file,
                                            order.label, order.label,
                                            runs[i].labels.empty() ? "none" : labels_text(runs[i].labels)));
      values[i] = comparable(found->second);
    }
  }
  std::vector<std::size_t> positions(runs.size());
  std::iota(positions.begin(), positions.end(), 0);
  std::stable_sort(positions.begin(), positions.end(), [&](std::size_t a, std::size_t b) {
    const HistoryRun &x = runs[a], &y = runs[b];
    if (order.by == RunOrder::By::given && x.argument != y.argument) return x.argument < y.argument;
    if (order.by == RunOrder::By::label) {
      if (const int c = compare_parameter_values(&values[a], &values[b]); c != 0) return c < 0;
    }
    return std::tie(x.time, x.file) < std::tie(y.time, y.file);
  });
  return positions;
}

}  // namespace ks::history
