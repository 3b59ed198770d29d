#include "calibration/fleet_health.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include <fmt/format.h>

namespace ks {
namespace {

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Every figure a device was measured for, by name: memory_gbps and tflops.<dtype>.
std::map<std::string, double> figures_of(const DeviceCalibration& device) {
  std::map<std::string, double> out;
  if (!std::isnan(device.measured.memory_gbps)) out["memory_gbps"] = device.measured.memory_gbps;
  for (const auto& [dtype, rate] : device.measured.tflops)
    if (!std::isnan(rate)) out["tflops." + dtype] = rate;
  return out;
}

}  // namespace

std::string SlowRank::describe() const {
  std::string text = fmt::format("rank {} on {} ({}):", rank, host, device);
  for (std::size_t i = 0; i < figures.size(); ++i) {
    const SlowFigure& f = figures[i];
    text += fmt::format("{} {} {:.4g} is {:.1f}% below the median of {} ({:.4g})", i ? ";" : "", f.figure, f.value,
                        f.below_pct, peers, f.median);
  }
  return text;
}

std::vector<SlowRank> slow_ranks(const std::vector<RankCalibration>& ranks) {
  // The ranks of each kind of device, by backend and name.
  std::map<std::pair<std::string, std::string>, std::vector<const RankCalibration*>> kinds;
  for (const RankCalibration& rank : ranks) {
    const DeviceCalibration& device = rank.primary();
    kinds[{device.backend, device.device}].push_back(&rank);
  }
  std::vector<SlowRank> out;
  for (const auto& [kind, members] : kinds) {
    if (members.size() < 2) continue;
    std::map<std::string, std::vector<double>> values;
    for (const RankCalibration* rank : members)
      for (const auto& [figure, value] : figures_of(rank->primary())) values[figure].push_back(value);
    std::map<std::string, double> medians;
    for (const auto& [figure, list] : values)
      if (list.size() >= 2) medians[figure] = median_of(list);
    for (const RankCalibration* rank : members) {
      SlowRank slow{rank->rank, rank->host, kind.second, static_cast<int>(members.size()), {}};
      for (const auto& [figure, value] : figures_of(rank->primary())) {
        const auto median = medians.find(figure);
        if (median == medians.end() || median->second <= 0) continue;
        if (value < (1 - kSlowFraction) * median->second)
          slow.figures.push_back({figure, value, median->second, 100 * (1 - value / median->second)});
      }
      if (!slow.figures.empty()) out.push_back(std::move(slow));
    }
  }
  std::sort(out.begin(), out.end(), [](const SlowRank& a, const SlowRank& b) { return a.rank < b.rank; });
  return out;
}

std::vector<int> rank_numbers(const std::vector<SlowRank>& slow) {
  std::vector<int> out;
  for (const SlowRank& s : slow) out.push_back(s.rank);
  return out;
}

nlohmann::json to_json(const SlowRank& slow) {
  nlohmann::json figures = nlohmann::json::array();
  for (const SlowFigure& f : slow.figures)
    figures.push_back({{"figure", f.figure}, {"value", f.value}, {"median", f.median}, {"below_pct", f.below_pct}});
  return {{"rank", slow.rank}, {"host", slow.host}, {"device", slow.device}, {"peers", slow.peers}, {"figures", figures}};
}

}  // namespace ks
