#include "history/point_series.h"

#include <cmath>
#include <utility>

namespace ks::history {

SeriesTable::SeriesTable(std::size_t runs, Keep keep) : runs_(runs), keep_(std::move(keep)) {}

void SeriesTable::add(std::size_t run, std::vector<PointMedian> medians) {
  for (PointMedian& median : medians) {
    auto [at, first] = place_.try_emplace(median.identity.key(), -1);
    if (first) {
      nlohmann::json params = nlohmann::json::parse(median.identity.params_json);
      if (!keep_(median.identity, params)) continue;
      at->second = static_cast<std::ptrdiff_t>(series_.size());
      series_.push_back({std::move(median.identity), std::move(params), std::vector<double>(runs_, std::nan(""))});
    }
    if (at->second >= 0) series_[static_cast<std::size_t>(at->second)].medians_ns[run] = median.median_ns;
  }
}

std::vector<PointSeries> SeriesTable::take(const std::vector<std::size_t>& order) {
  std::vector<double> ordered(order.size());
  for (PointSeries& series : series_) {
    for (std::size_t k = 0; k < order.size(); ++k) ordered[k] = series.medians_ns[order[k]];
    series.medians_ns.swap(ordered);
    ordered.resize(order.size());
  }
  place_.clear();
  return std::move(series_);
}

}  // namespace ks::history
