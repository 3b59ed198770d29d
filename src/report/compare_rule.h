#pragma once
// The rule `kernelsweep compare` labels one point by (docs/compare.md): from the raw samples of the
// point in BASE and in NEW, the bootstrap confidence interval of the ratio of their medians
// (NEW / BASE), against a practical threshold T:
//
//   slower   the interval lies wholly above 1 + T
//   faster   the interval lies wholly below 1 / (1 + T)
//   same     the interval lies wholly within [1 / (1 + T), 1 + T]
//   unclear  anything else, and points with fewer than min_samples samples on either side
//
// The bounds are symmetric in ratio (a point twice as slow is "2x", as one twice as fast is
// "1/2x"), so swapping BASE and NEW swaps faster and slower and keeps every other label.
//
// The bootstrap is computed exactly rather than by drawing resamples. The median of a resample
// (with replacement) of n sorted values x(1) <= ... <= x(n) is x(J), where J is the smallest j whose
// count of resampled values at or below x(j) reaches the middle rank m; that count is
// Binomial(n, j/n), so P(J <= j) = P(Binomial(n, j/n) >= m). These probabilities depend on n alone;
// they are made once per sample count and cover, in practice, a window of about 12 sqrt(n) values
// around the middle. The ratio's distribution is then that of NEW's bootstrap median over BASE's
// (independent), and its quantiles are found by bisection over that exact distribution. This is
// what infinitely many resamples would give: there is no resample count, no random seed, and the
// verdict is the same on every run and machine. For an even n, the median's distribution is taken
// as the even mixture of the two middle order statistics' (a slightly wider, so more cautious,
// stand-in for the distribution of their average).
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace ks {

struct ChangeRule {
  double threshold = 0.05;      // T: a ratio within [1/(1+T), 1+T] counts as no change
  double confidence = 0.99;     // of the interval, two-sided
  std::size_t min_samples = 5;  // fewer on either side: unclear
};

enum class Change { same, faster, slower, unclear };
const char* change_name(Change change);  // "same", "faster", "slower", "unclear"

// The bootstrap distribution of one sample set's median: the values it can take (a slice of the
// sorted samples, ascending) and their probabilities.
struct MedianBootstrap {
  std::size_t count = 0;  // samples in the set
  double median = 0;      // the set's own median (numpy's "linear" quantile 0.5)
  std::vector<double> values;
  std::shared_ptr<const std::vector<double>> weights;  // the same length as values; shared by every set of this count
};

struct RatioInterval {
  double low = 0, high = 0;
};

struct Verdict {
  Change change = Change::unclear;
  double ratio = 0;          // NEW median / BASE median
  RatioInterval interval{};  // of the ratio; {0, 0} when it was not computed
  bool has_interval = false;
  std::string why;  // set when the point is unclear for want of data
};

// The label an interval earns under threshold T (the table at the top of this file).
Change change_of(const RatioInterval& interval, double threshold);

// The q-quantile of NEW*/BASE*, NEW* and BASE* being independent draws from the two distributions:
// the smallest ratio r with P(NEW* <= r * BASE*) >= q, to a relative 1e-6, rounded away from the
// middle (down for q < 0.5, up above).
double ratio_quantile(const MedianBootstrap& base, const MedianBootstrap& next, double q);

// Judges points under one rule. It keeps the bootstrap probabilities of each sample count it has
// met, so one judge should serve a whole comparison.
class ChangeJudge {
 public:
  explicit ChangeJudge(ChangeRule rule = {});
  const ChangeRule& rule() const { return rule_; }

  // The bootstrap distribution of the samples' median (the samples need not be sorted). Safe to
  // call from several threads at once.
  MedianBootstrap median_bootstrap(std::vector<double> samples);
  Verdict judge(const MedianBootstrap& base, const MedianBootstrap& next) const;
  Verdict judge(std::vector<double> base_samples, std::vector<double> new_samples);

 private:
  // The probabilities of the resample median's sorted index: weights[i] for index first + i.
  struct OrderWeights {
    std::size_t first = 0;
    std::shared_ptr<const std::vector<double>> weights;
  };
  const OrderWeights& weights_for(std::size_t count);

  ChangeRule rule_;
  std::mutex weights_mutex_;
  std::unordered_map<std::size_t, OrderWeights> weights_by_count_;
};

}  // namespace ks
