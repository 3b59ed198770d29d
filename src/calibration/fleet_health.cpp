#include "calibration/fleet_health.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "measure/do_bench.h"

namespace ks {

std::map<std::string, double> figures_of(const DeviceCalibration& device) {
  std::map<std::string, double> out;
  if (!std::isnan(device.measured.memory_gbps)) out["memory_gbps"] = device.measured.memory_gbps;
  for (const auto& [dtype, rate] : device.measured.tflops)
    if (!std::isnan(rate)) out["tflops." + dtype] = rate;
  return out;
}

double slow_fraction(const std::string& backend, const std::string& figure) {
  const bool tensor_core_product = backend == "cuda" && figure.rfind("tflops.", 0) == 0 && figure != "tflops.fp32";
  return tensor_core_product ? kPowerBoundSlowFraction : kSlowFraction;
}

std::string slow_rule() {
  return fmt::format("more than {:.0f}% below ({:.0f}% for a GPU's tensor-core products)", 100 * kSlowFraction,
                     100 * kPowerBoundSlowFraction);
}

std::vector<SlowFigure> figures_below(const std::string& backend, const std::map<std::string, double>& reference,
                                      const std::map<std::string, double>& values) {
  std::vector<SlowFigure> out;
  for (const auto& [figure, value] : values) {
    const auto base = reference.find(figure);
    if (base == reference.end() || !(base->second > 0)) continue;
    const double allowed = slow_fraction(backend, figure);
    if (value < (1 - allowed) * base->second)
      out.push_back({figure, value, base->second, 100 * (1 - value / base->second), 100 * allowed});
  }
  return out;
}

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
      SlowRank slow{rank->rank, rank->host, kind.second, static_cast<int>(members.size()),
                    figures_below(kind.first, medians, figures_of(rank->primary()))};
      if (!slow.figures.empty()) out.push_back(std::move(slow));
    }
  }
  std::sort(out.begin(), out.end(), [](const SlowRank& a, const SlowRank& b) { return a.rank < b.rank; });
  return out;
}

std::vector<int> ranks_to_set_aside(const std::vector<SlowRank>& slow) {
  const auto worst = [](const SlowRank& rank) {
    double most = 0;
    // How far past its tolerance: a bf16 rate 21% below (20% allowed) is less slow than memory 15% below (5%).
    for (const SlowFigure& f : rank.figures) most = std::max(most, f.below_pct - f.allowed_pct);
    return most;
  };
  std::map<std::string, std::vector<const SlowRank*>> by_device;
  for (const SlowRank& rank : slow) by_device[rank.device].push_back(&rank);
  std::vector<int> out;
  for (const auto& [device, ranks] : by_device) {
    const SlowRank* stays = nullptr;
    if (static_cast<int>(ranks.size()) == ranks.front()->peers)
      stays = *std::min_element(ranks.begin(), ranks.end(),
                                [&](const SlowRank* a, const SlowRank* b) { return worst(*a) < worst(*b); });
    for (const SlowRank* rank : ranks)
      if (rank != stays) out.push_back(rank->rank);
  }
  std::sort(out.begin(), out.end());
  return out;
}

nlohmann::json to_json(const SlowRank& slow) {
  nlohmann::json figures = nlohmann::json::array();
  for (const SlowFigure& f : slow.figures)
    figures.push_back({{"figure", f.figure},
                       {"value", f.value},
                       {"median", f.median},
                       {"below_pct", f.below_pct},
                       {"allowed_pct", f.allowed_pct}});
  return {
      {"rank", slow.rank}, {"host", slow.host}, {"device", slow.device}, {"peers", slow.peers}, {"figures", figures}};
}

}  // namespace ks
