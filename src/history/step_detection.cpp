#include "history/step_detection.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "history/segmentation.h"
#include "measure/do_bench.h"

namespace ks::history {
namespace {

// The standard error of the difference of two levels, medians of n_before and n_after runs: the
// median of n values of spread sigma varies by about sigma √(π / 2n).
double difference_error(double sigma, std::size_t n_before, std::size_t n_after) {
  return sigma * std::sqrt(std::numbers::pi / 2 * (1.0 / n_before + 1.0 / n_after));
}

// The z of a two-sided test at rule.false_alarm_rate over the n - 1 places a step could begin in a series
// of n values (Bonferroni): a series of noise alone shows a step at no more than that rate.
double significance_z(std::size_t n, const StepRule& rule) {
  const double tail = rule.false_alarm_rate / 2 / static_cast<double>(std::max<std::size_t>(n - 1, 1));
  double low = 0, high = 40;  // P(Z > z) = erfc(z / √2) / 2 falls with z: bisect it to 1e-9
  while (high - low > 1e-9) {
    const double z = (low + high) / 2;
    (std::erfc(z / std::numbers::sqrt2) / 2 > tail ? low : high) = z;
  }
  return high;
}

// Runs [first, last) of the series, and their level (their median).
struct Segment {
  std::size_t first = 0, last = 0;
  double level = 0;
  std::size_t runs() const { return last - first; }
};

Segment segment_of(std::span<const double> values, std::size_t first, std::size_t last) {
  return {first, last, median_of(std::vector<double>(values.begin() + first, values.begin() + last))};
}

// How many runs of `segment` lie nearer its own level than the `other` level: those that hold to it.
std::size_t runs_holding(std::span<const double> values, const Segment& segment, double other) {
  const double middle = (segment.level + other) / 2;
  std::size_t holding = 0;
  for (std::size_t i = segment.first; i < segment.last; ++i)
    holding += segment.level > other ? values[i] > middle : values[i] < middle;
  return holding;
}

// Whether the change from one segment's level to the next one's is a step: larger than z standard
// errors and than min_change_pct, and held by min_runs runs on either side (an outlier beside a noisy
// run makes a segment of two whose median is far off, but only one of its runs holds to it).
bool is_step(std::span<const double> values, const Segment& before, const Segment& after, double sigma, double z,
             const StepRule& rule) {
  const double change = std::abs(after.level - before.level);
  return change > z * difference_error(sigma, before.runs(), after.runs()) &&
         change / before.level * 100 > rule.min_change_pct &&
         runs_holding(values, before, after.level) >= rule.min_runs &&
         runs_holding(values, after, before.level) >= rule.min_runs;
}

// Merges away the boundaries that are no step, the one of the smallest change first, until every
// boundary left is one. `starts` are the segments' first indices (starting with 0).
std::vector<std::size_t> steps_only(std::span<const double> values, std::vector<std::size_t> starts, double sigma,
                                    const StepRule& rule) {
  const double z = significance_z(values.size(), rule);
  const auto segment = [&](std::size_t s) {
    return segment_of(values, starts[s], s + 1 < starts.size() ? starts[s + 1] : values.size());
  };
  while (starts.size() > 1) {
    std::optional<std::size_t> weakest;
    double weakest_change = 0;
    for (std::size_t b = 1; b < starts.size(); ++b) {
      const Segment before = segment(b - 1), after = segment(b);
      if (is_step(values, before, after, sigma, z, rule)) continue;
      const double change = std::abs(after.level / before.level - 1);
      if (!weakest || change < weakest_change) {
        weakest = b;
        weakest_change = change;
      }
    }
    if (!weakest) break;
    starts.erase(starts.begin() + static_cast<std::ptrdiff_t>(*weakest));
  }
  return starts;
}

// The latest value alone away from the level of the runs before it (since the last step), by as much
// as a step must be; the runs before it must be a level of min_runs or more.
std::optional<Step> pending_latest(std::span<const double> values, std::size_t level_start, double sigma,
                                   const StepRule& rule) {
  const std::size_t n = values.size();
  if (n - 1 - level_start < rule.min_runs) return std::nullopt;
  const Segment before = segment_of(values, level_start, n - 1), latest{n - 1, n, values[n - 1]};
  const double change = std::abs(latest.level - before.level);
  if (change <= significance_z(n, rule) * difference_error(sigma, before.runs(), 1) ||
      change / before.level * 100 <= rule.min_change_pct)
    return std::nullopt;
  return Step{n - 1, before.level, latest.level, 1};
}

}  // namespace

double series_noise(std::span<const double> values, double noise_floor) {
  const double floor = noise_floor * std::abs(median_of(std::vector<double>(values.begin(), values.end())));
  if (values.size() < 2) return floor;
  std::vector<double> changes;
  for (std::size_t i = 1; i < values.size(); ++i) changes.push_back(std::abs(values[i] - values[i - 1]));
  // 1.4826 × the median absolute value: sigma of a normal distribution; a difference of two runs
  // has √2 times one run's spread.
  return std::max(floor, 1.4826 * median_of(std::move(changes)) / std::numbers::sqrt2);
}

SeriesSteps find_steps(std::span<const double> medians_ns, const StepRule& rule) {
  std::vector<double> values;
  std::vector<std::size_t> position;  // of each value, in the series with its gaps
  for (std::size_t i = 0; i < medians_ns.size(); ++i) {
    if (std::isnan(medians_ns[i])) continue;
    values.push_back(medians_ns[i]);
    position.push_back(i);
  }
  SeriesSteps out;
  out.runs_seen = values.size();
  if (values.empty()) return out;
  out.first_ns = values.front();
  out.latest_ns = values.back();
  out.latest_run = position.back();
  out.noise_ns = series_noise(values, rule.noise_floor);
  const std::vector<std::size_t> starts = steps_only(
      values, optimal_segmentation(values, rule.penalty_sigmas * out.noise_ns, rule.min_runs), out.noise_ns, rule);
  for (std::size_t s = 1; s < starts.size(); ++s) {
    const std::size_t end = s + 1 < starts.size() ? starts[s + 1] : values.size();
    const Segment before = segment_of(values, starts[s - 1], starts[s]), after = segment_of(values, starts[s], end);
    out.steps.push_back({position[after.first], before.level, after.level, after.runs()});
  }
  out.level_ns = segment_of(values, starts.back(), values.size()).level;
  out.pending = pending_latest(values, starts.back(), out.noise_ns, rule);
  if (out.pending) out.pending->run = position.back();
  return out;
}

}  // namespace ks::history
