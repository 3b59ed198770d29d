#include "report/compare_rule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "measure/do_bench.h"

namespace ks {
namespace {

// Order-statistic probabilities below this, at either end, are left out of a window (their mass
// goes to the window's end values): far below what a 99% or even a 99.99% interval looks at.
constexpr double kTailMass = 1e-14;

// P(X >= m) for X ~ Binomial(n, p), 0 < p < 1, summed from the side where the terms fall away
// from m, so that only the terms that matter are visited (about 9 standard deviations of them).
double binomial_upper_tail(std::size_t n, double p, std::size_t m) {
  if (m == 0) return 1;
  if (m > n) return 0;
  const double nn = static_cast<double>(n);
  const auto log_pmf = [&](double k) {
    return std::lgamma(nn + 1) - std::lgamma(k + 1) - std::lgamma(nn - k + 1) + k * std::log(p) +
           (nn - k) * std::log1p(-p);
  };
  const double odds = p / (1 - p);
  double sum = 0;
  if (static_cast<double>(m) > nn * p) {  // the terms fall from k = m upwards
    double term = std::exp(log_pmf(static_cast<double>(m)));
    for (std::size_t k = m; k <= n && term > 0; ++k) {
      sum += term;
      if (term < sum * 1e-17) break;
      term *= static_cast<double>(n - k) / static_cast<double>(k + 1) * odds;
    }
    return sum;
  }
  double term = std::exp(log_pmf(static_cast<double>(m - 1)));  // they fall from k = m - 1 downwards
  for (std::size_t k = m - 1; term > 0; --k) {
    sum += term;
    if (term < sum * 1e-17 || k == 0) break;
    term *= static_cast<double>(k) / static_cast<double>(n - k + 1) / odds;
  }
  return 1 - sum;
}

// P(the m-th smallest of a resample of n values is at most x(j)), j counted from 1.
double order_statistic_cdf(std::size_t n, std::size_t m, std::size_t j) {
  if (j == 0) return 0;
  if (j >= n) return 1;
  return binomial_upper_tail(n, static_cast<double>(j) / static_cast<double>(n), m);
}

// The probabilities of the m-th order statistic's index, over the window where they are not
// negligible: {first index (from 0), probabilities}.
std::pair<std::size_t, std::vector<double>> order_statistic_weights(std::size_t n, std::size_t m) {
  std::size_t low = m - 1;  // the largest j with cdf(j) <= kTailMass (or 0)
  while (low > 0 && order_statistic_cdf(n, m, low) > kTailMass) --low;
  std::size_t high = m;  // the smallest j with cdf(j) >= 1 - kTailMass (or n)
  while (high < n && order_statistic_cdf(n, m, high) < 1 - kTailMass) ++high;
  std::vector<double> weights;
  double below = 0;  // cdf(low), taken as 0: the tail's mass goes to the first value
  for (std::size_t j = low + 1; j <= high; ++j) {
    const double cdf = j == high ? 1.0 : order_statistic_cdf(n, m, j);
    weights.push_back(cdf - below);
    below = cdf;
  }
  return {low, std::move(weights)};
}

// F(r) = P(NEW* <= r * BASE*), both value lists ascending.
double ratio_cdf(const MedianBootstrap& base, const MedianBootstrap& next, double r) {
  const std::vector<double>& a = *base.weights;
  const std::vector<double>& b = *next.weights;
  double total = 0, below = 0;
  std::size_t k = 0;
  for (std::size_t i = 0; i < base.values.size(); ++i) {
    const double bound = r * base.values[i];
    while (k < next.values.size() && next.values[k] <= bound) below += b[k++];
    total += a[i] * below;
  }
  return total;
}

// The q-quantile of the standard normal distribution: Newton's method on its CDF from 0, which
// approaches the root from one side (the CDF is convex below 0 and concave above).
double normal_quantile(double q) {
  double z = 0;
  for (int i = 0; i < 60; ++i) {
    const double step = (0.5 * std::erfc(-z / std::sqrt(2.0)) - q) / (std::exp(-z * z / 2) / std::sqrt(2 * M_PI));
    z -= step;
    if (std::abs(step) < 1e-9) break;
  }
  return z;
}

// The mean and variance of log(value) under a bootstrap distribution of the median.
struct LogMoments {
  double mean = 0, variance = 0;
};

LogMoments log_moments(const MedianBootstrap& distribution) {
  const std::vector<double>& weights = *distribution.weights;
  const double origin = std::log(distribution.values.front());  // centred: no cancellation in the variance
  double sum = 0, squares = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double x = std::log(distribution.values[i]) - origin;
    sum += weights[i] * x;
    squares += weights[i] * x * x;
  }
  return {origin + sum, std::max(0.0, squares - sum * sum)};
}

}  // namespace

const char* change_name(Change change) {
  static constexpr const char* kNames[] = {"same", "faster", "slower", "unclear"};  // in the order of Change
  return kNames[static_cast<std::size_t>(change)];
}

Change change_of(const RatioInterval& interval, double threshold) {
  const double up = 1 + threshold, down = 1 / (1 + threshold);
  if (interval.low > up) return Change::slower;
  if (interval.high < down) return Change::faster;
  if (interval.low >= down && interval.high <= up) return Change::same;
  return Change::unclear;
}

double ratio_quantile(const MedianBootstrap& base, const MedianBootstrap& next, double q) {
  // F is 0 below the smallest ratio and 1 at the largest. The normal approximation of the log ratio
  // places a narrow bracket around the quantile, widened until F brackets q; then bisection in log
  // space narrows it to 1e-6. Started from the whole range instead, the bisection takes about a
  // third more evaluations of F, and compare spends most of its time here.
  const double lowest = next.values.front() / base.values.back() * (1 - 1e-12);
  const double highest = next.values.back() / base.values.front();
  const LogMoments n = log_moments(next), b = log_moments(base);
  const double sigma = std::sqrt(n.variance + b.variance);
  const double guess = std::clamp(std::exp(n.mean - b.mean + normal_quantile(q) * sigma), lowest, highest);
  double step = std::max(sigma / 2, 1e-6);
  double low = std::max(lowest, guess * std::exp(-step));
  while (low > lowest && ratio_cdf(base, next, low) >= q) low = std::max(lowest, low * std::exp(-(step *= 2)));
  step = std::max(sigma / 2, 1e-6);
  double high = std::min(highest, guess * std::exp(step));
  while (high < highest && ratio_cdf(base, next, high) < q) high = std::min(highest, high * std::exp(step *= 2));
  while (high / low > 1 + 1e-6) {  // far below the 4 digits printed and any threshold
    const double middle = std::sqrt(low * high);
    if (ratio_cdf(base, next, middle) >= q) high = middle;
    else low = middle;
  }
  // The exact quantile lies in [low, high]. Rounded away from the middle, an interval of two of these
  // holds the exact one: where the samples are tight and tied, the exact bound is the ratio of two
  // samples, often the point's own ratio, which a bound rounded inwards would leave outside.
  return q < 0.5 ? low : high;
}

ChangeJudge::ChangeJudge(ChangeRule rule) : rule_(rule) {
  if (!(rule_.threshold > 0))
    throw std::invalid_argument(fmt::format("the threshold must be above 0, got {}", rule_.threshold));
  if (!(rule_.confidence > 0 && rule_.confidence < 1))
    throw std::invalid_argument(fmt::format("the confidence must lie in (0, 1), got {}", rule_.confidence));
  rule_.min_samples = std::max<std::size_t>(rule_.min_samples, 1);
}

const ChangeJudge::OrderWeights& ChangeJudge::weights_for(std::size_t count) {
  const std::lock_guard<std::mutex> lock(weights_mutex_);  // an unordered_map's elements stay put as it grows
  auto found = weights_by_count_.find(count);
  if (found != weights_by_count_.end()) return found->second;
  // The middle order statistic, (count + 1) / 2 for an odd count.
  auto [first, weights] = order_statistic_weights(count, count / 2 + 1);
  if (count % 2 == 0) {  // the even mixture of the two middle order statistics
    auto [first_low, low] = order_statistic_weights(count, count / 2);
    const std::size_t start = std::min(first_low, first);
    std::vector<double> mixed(std::max(first_low + low.size(), first + weights.size()) - start, 0.0);
    for (std::size_t i = 0; i < low.size(); ++i) mixed[first_low - start + i] += low[i] / 2;
    for (std::size_t i = 0; i < weights.size(); ++i) mixed[first - start + i] += weights[i] / 2;
    first = start;
    weights = std::move(mixed);
  }
  const OrderWeights made{first, std::make_shared<const std::vector<double>>(std::move(weights))};
  return weights_by_count_.emplace(count, made).first->second;
}

MedianBootstrap ChangeJudge::median_bootstrap(std::vector<double> samples) {
  MedianBootstrap out;
  out.count = samples.size();
  if (samples.empty()) return out;
  std::sort(samples.begin(), samples.end());
  out.median = quantile_linear(samples, 0.5);
  const OrderWeights& order = weights_for(samples.size());
  out.values.assign(samples.begin() + static_cast<std::ptrdiff_t>(order.first),
                    samples.begin() + static_cast<std::ptrdiff_t>(order.first + order.weights->size()));
  out.weights = order.weights;
  return out;
}

Verdict ChangeJudge::judge(const MedianBootstrap& base, const MedianBootstrap& next) const {
  Verdict verdict;
  if (base.count > 0 && next.count > 0 && base.median > 0) verdict.ratio = next.median / base.median;
  if (base.count < rule_.min_samples || next.count < rule_.min_samples) {
    verdict.why =
        fmt::format("too few samples ({} and {}; at least {} are needed)", base.count, next.count, rule_.min_samples);
    return verdict;
  }
  if (!(base.values.front() > 0) || !(next.values.front() > 0)) {
    verdict.why = "a sample near the median is not a positive time";
    return verdict;
  }
  const double tail = (1 - rule_.confidence) / 2;
  verdict.interval = {ratio_quantile(base, next, tail), ratio_quantile(base, next, 1 - tail)};
  verdict.has_interval = true;
  verdict.change = change_of(verdict.interval, rule_.threshold);
  return verdict;
}

Verdict ChangeJudge::judge(std::vector<double> base_samples, std::vector<double> new_samples) {
  return judge(median_bootstrap(std::move(base_samples)), median_bootstrap(std::move(new_samples)));
}

}  // namespace ks
