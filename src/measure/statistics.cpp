#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "measure/do_bench.h"

namespace ks {
namespace {

// a + t·(b − a), written as numpy's _lerp and torch.lerp write it (from the nearer end) so that our
// quantiles agree with theirs to the last bit, not only to rounding.
double lerp(double a, double b, double t) {
  const double difference = b - a;
  return t < 0.5 ? a + difference * t : b - difference * (1 - t);
}

}  // namespace

double median_of(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  return quantile_linear(values, 0.5);
}

double quantile_linear(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("quantile_linear: no values");
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument(fmt::format("quantile_linear: q = {} is outside [0, 1]", q));
  // numpy "linear": the virtual index (n − 1)·q, between the closest ranks below and above it.
  const double position = static_cast<double>(sorted.size() - 1) * q;
  const double below = std::floor(position);
  const auto lower = static_cast<std::size_t>(below);
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  return lerp(sorted[lower], sorted[upper], position - below);
}

Statistics summarize(const std::vector<double>& samples_ns) {
  if (samples_ns.empty()) throw std::invalid_argument("summarize: no samples");
  std::vector<double> sorted = samples_ns;
  std::sort(sorted.begin(), sorted.end());
  const auto n = static_cast<double>(sorted.size());

  Statistics stats;
  stats.median_ns = quantile_linear(sorted, 0.5);
  stats.p20_ns = quantile_linear(sorted, 0.2);
  stats.p80_ns = quantile_linear(sorted, 0.8);
  stats.min_ns = sorted.front();
  stats.max_ns = sorted.back();
  stats.mean_ns = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  double squares = 0;
  for (double x : sorted) squares += (x - stats.mean_ns) * (x - stats.mean_ns);
  stats.stddev_ns = sorted.size() > 1 ? std::sqrt(squares / (n - 1)) : 0.0;  // sample (n − 1), as torch.std
  return stats;
}

std::vector<Quantile> quantiles_of(const std::vector<double>& samples_ns, const std::vector<double>& levels) {
  if (samples_ns.empty()) return {};
  std::vector<double> sorted = samples_ns;
  std::sort(sorted.begin(), sorted.end());
  std::vector<Quantile> out;
  out.reserve(levels.size());
  for (double q : levels) out.push_back({q, quantile_linear(sorted, q)});
  return out;
}

}  // namespace ks
