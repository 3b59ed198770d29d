#include "view/view.h"

#include <algorithm>
#include <exception>
#include <map>
#include <unordered_map>

#include "common/huge_pages.h"
#include "common/parallel.h"
#include "measure/do_bench.h"

namespace ks {
namespace {

void append_parameter(std::string& text, const std::string& name, const nlohmann::json& value) {
  if (!text.empty()) text += ' ';
  text += name + '=' + (value.is_string() ? value.get<std::string>() : value.dump());
}

}  // namespace

RepetitionSummary summarize_repetitions(std::vector<std::pair<std::int32_t, double>> passed_medians) {
  // The latest passed row of each repetition: stable-sorted by repetition, the last of each run.
  std::stable_sort(passed_medians.begin(), passed_medians.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<double> latest;
  for (std::size_t i = 0; i < passed_medians.size(); ++i)
    if (i + 1 == passed_medians.size() || passed_medians[i + 1].first != passed_medians[i].first)
      latest.push_back(passed_medians[i].second);
  RepetitionSummary summary;
  summary.passed = static_cast<std::int64_t>(latest.size());
  if (latest.empty()) return summary;
  std::sort(latest.begin(), latest.end());
  summary.median_of_medians_ns = quantile_linear(latest, 0.5);
  summary.spread = latest.size() > 1 ? latest.back() / latest.front() : std::nan("");
  return summary;
}

std::vector<ViewRow> current_view(const ResultsFile& file, const std::string& file_label) {
  // A view of 100,000 points is millions of small objects (strings, parsed parameters) made at once
  // and kept until the command ends: with the heap grown in large steps, reading a large file takes a
  // tenth less time (bench/results/offline-cpu2.md).
  grow_the_heap_in_large_steps();
  std::vector<StoredRun> runs = file.read_runs();
  std::vector<ViewRow> view;
  view.reserve(runs.size());  // a ViewRow is large: growing the vector would move each several times
  std::unordered_map<std::string, std::size_t> position;  // point id -> its place in `view`
  position.reserve(runs.size());
  // Under `repetitions`, each point's passed medians with their repetition, in row order.
  const bool repeated = std::any_of(runs.begin(), runs.end(), [](const StoredRun& run) { return run.repetition > 0; });
  std::vector<std::vector<std::pair<std::int32_t, double>>> medians;
  for (std::uint64_t i = 0; i < runs.size(); ++i) {
    auto [at, first] = position.try_emplace(runs[i].point_id, view.size());
    if (first) {
      view.emplace_back().file = file_label;
      if (repeated) medians.emplace_back();
    } else {
      ++view[at->second].rows_of_point;
    }
    if (repeated && runs[i].status == "passed")
      medians[at->second].emplace_back(runs[i].repetition, runs[i].stats.median_ns);
    ViewRow& row = view[at->second];
    row.run = std::move(runs[i]);
    row.row = i;
  }
  for (std::size_t i = 0; i < view.size(); ++i) {
    if (repeated) {
      const RepetitionSummary summary = summarize_repetitions(std::move(medians[i]));
      view[i].repetitions_passed = summary.passed;
      view[i].median_of_medians_ns = summary.median_of_medians_ns;
      view[i].repetition_spread = summary.spread;
    } else if (view[i].run.status == "passed") {
      view[i].repetitions_passed = 1;
      view[i].median_of_medians_ns = view[i].run.stats.median_ns;
    }
  }
  in_parallel(view.size(), [&](std::size_t i) { view[i].params = nlohmann::json::parse(view[i].run.params_json); });
  return view;
}

std::vector<ViewRow> current_view(const std::vector<std::string>& files) {
  std::vector<ViewRow> view;
  for (const std::string& path : files) {
    std::vector<ViewRow> part = current_view(ResultsFile::open_read_only(path), path);
    view.insert(view.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  return view;
}

std::string parameters_text(const nlohmann::json& params) {
  std::string text;
  for (const auto& [name, value] : params.items()) append_parameter(text, name, value);
  return text;
}

std::string parameters_text(const nlohmann::json& params, const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) {
    const auto found = params.find(name);
    if (found != params.end()) append_parameter(text, name, *found);
  }
  return text;
}

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

int compare_parameter_values(const nlohmann::json* a, const nlohmann::json* b) {
  if (!a || !b) return a ? -1 : b ? 1 : 0;
  if (a->is_number() && b->is_number()) {
    const double x = a->get<double>(), y = b->get<double>();
    return x < y ? -1 : y < x ? 1 : 0;
  }
  if (a->is_number() != b->is_number()) return a->is_number() ? -1 : 1;
  if (a->is_string() && b->is_string())
    return a->get_ref<const std::string&>().compare(b->get_ref<const std::string&>());
  return a->dump().compare(b->dump());
}

}  // namespace ks
