// The steps of one point's series (history/step_detection.h) and the segmentation under them
// (history/segmentation.h): literal series whose steps are known to the digit, and generated series
// of known steps under known noise (a seeded generator, the same numbers on every machine).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include "history/segmentation.h"
#include "history/step_detection.h"

namespace ks::testing {
namespace {

using history::find_steps;
using history::SeriesSteps;
using history::StepRule;

// Normal noise from a seeded mt19937_64 (whose output the standard fixes) by Box-Muller.
class Noise {
 public:
  explicit Noise(std::uint64_t seed) : random_(seed) {}
  double next() {
    const double u = (static_cast<double>(random_() >> 11) + 0.5) / 9007199254740992.0;
    const double v = static_cast<double>(random_() >> 11) / 9007199254740992.0;
    return std::sqrt(-2 * std::log(u)) * std::cos(2 * std::numbers::pi * v);
  }

 private:
  std::mt19937_64 random_;
};

// `runs` medians of about 1 ms, each level in `levels` (relative to 1) from its run on, with
// `noise` relative spread.
std::vector<double> series(std::size_t runs, const std::vector<std::pair<std::size_t, double>>& levels, double noise,
                           std::uint64_t seed) {
  Noise random(seed);
  std::vector<double> out(runs);
  for (std::size_t i = 0; i < runs; ++i) {
    double level = 1;
    for (const auto& [from, value] : levels)
      if (i >= from) level = value;
    out[i] = 1e6 * level * (1 + noise * random.next());
  }
  return out;
}

TEST(Segmentation, CostsEachSegmentByItsAbsoluteDeviationsFromItsMedian) {
  EXPECT_DOUBLE_EQ(history::absolute_deviation_cost(std::vector<double>{1, 2, 3, 10}), 10.0);  // about 2.5
  EXPECT_DOUBLE_EQ(history::absolute_deviation_cost(std::vector<double>{5, 1, 3}), 4.0);       // about 3
  EXPECT_DOUBLE_EQ(history::absolute_deviation_cost(std::vector<double>{7}), 0.0);
}

TEST(Segmentation, SplitsWhereTheLevelChangesAndPaysThePenalty) {
  const std::vector<double> two_levels{1, 1, 1, 5, 5, 5};
  EXPECT_EQ(history::optimal_segmentation(two_levels, 1, 2), (std::vector<std::size_t>{0, 3}));
  // A boundary saves 12 here: a penalty of 12 or more keeps the one level (a tie goes to fewer).
  EXPECT_EQ(history::optimal_segmentation(two_levels, 12, 2), (std::vector<std::size_t>{0}));
  // One value apart is never a segment of its own at a least length of 2.
  EXPECT_EQ(history::optimal_segmentation(std::vector<double>{1, 1, 1, 9, 1, 1, 1}, 0.5, 2),
            (std::vector<std::size_t>{0}));
  EXPECT_EQ(history::optimal_segmentation(std::vector<double>{1, 1, 9}, 0, 2), (std::vector<std::size_t>{0}));
}

TEST(StepDetection, NoiseIsTheSpreadOfSuccessiveChanges) {
  // Changes 0.02, 0.02, 0.5 (a step), 0.02: their median 0.02, × 1.4826 / √2.
  const std::vector<double> values{1.00, 1.02, 1.00, 1.50, 1.52};
  EXPECT_NEAR(history::series_noise(values, 0.001), 1.4826 * 0.02 / std::numbers::sqrt2, 1e-12);
  // Identical runs have no spread: the floor, a fraction of the median level, stands in for it.
  EXPECT_DOUBLE_EQ(history::series_noise(std::vector<double>{2, 2, 2, 2}, 0.001), 0.002);
}

TEST(StepDetection, ATenPercentStepIsFoundAtItsRunWithItsLevels) {
  const std::vector<double> ms{1.00, 1.02, 0.99, 1.01, 0.98, 1.00, 1.10, 1.12, 1.09, 1.11, 1.10, 1.08};
  std::vector<double> ns;
  for (double value : ms) ns.push_back(value * 1e6);
  const SeriesSteps found = find_steps(ns, StepRule{});
  ASSERT_EQ(found.steps.size(), 1u);
  EXPECT_EQ(found.steps[0].run, 6u);
  EXPECT_DOUBLE_EQ(found.steps[0].before_ns, 1.00e6);  // the median of runs 0 to 5
  EXPECT_DOUBLE_EQ(found.steps[0].after_ns, 1.10e6);   // of runs 6 to 11
  EXPECT_NEAR(found.steps[0].change_pct(), 10.0, 1e-9);
  EXPECT_EQ(found.steps[0].runs_after, 6u);
  EXPECT_TRUE(found.steps[0].slowdown());
  EXPECT_TRUE(found.slower_now());
  EXPECT_FALSE(found.pending);
  EXPECT_EQ(found.runs_seen, 12u);
  EXPECT_DOUBLE_EQ(found.first_ns, 1.00e6);
  EXPECT_DOUBLE_EQ(found.latest_ns, 1.08e6);
  EXPECT_DOUBLE_EQ(found.level_ns, 1.10e6);
}

TEST(StepDetection, ATenPercentStepUnderTwoPercentNoiseIsFoundAtTheRightRun) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const SeriesSteps found = find_steps(series(30, {{15, 1.10}}, 0.02, seed), StepRule{});
    ASSERT_EQ(found.steps.size(), 1u) << "seed " << seed;
    EXPECT_EQ(found.steps[0].run, 15u) << "seed " << seed;
    EXPECT_NEAR(found.steps[0].change_pct(), 10.0, 2.5) << "seed " << seed;
    EXPECT_TRUE(found.slower_now());
  }
}

TEST(StepDetection, ASingleOutlierRunIsNotAStep) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    for (std::size_t at : {0u, 1u, 10u, 18u}) {
      std::vector<double> values = series(20, {}, 0.01, seed);
      values[at] *= 1.4;
      const SeriesSteps found = find_steps(values, StepRule{});
      EXPECT_TRUE(found.steps.empty()) << "seed " << seed << ", outlier at run " << at;
      EXPECT_FALSE(found.pending) << "seed " << seed << ", outlier at run " << at;
    }
  }
}

TEST(StepDetection, TheLatestRunAloneOffItsLevelIsPendingNotAStep) {
  std::vector<double> values = series(12, {}, 0.01, 3);
  values.back() *= 1.3;
  const SeriesSteps found = find_steps(values, StepRule{});
  EXPECT_TRUE(found.steps.empty());
  EXPECT_FALSE(found.slower_now());
  ASSERT_TRUE(found.pending);
  EXPECT_EQ(found.pending->run, 11u);
  EXPECT_EQ(found.pending->runs_after, 1u);
  EXPECT_NEAR(found.pending->change_pct(), 30.0, 3);
  // A second run on the new level makes it a step, and the pending run its first.
  values.push_back(values.back());
  const SeriesSteps confirmed = find_steps(values, StepRule{});
  ASSERT_EQ(confirmed.steps.size(), 1u);
  EXPECT_EQ(confirmed.steps[0].run, 11u);
  EXPECT_TRUE(confirmed.slower_now());
  EXPECT_FALSE(confirmed.pending);
}

TEST(StepDetection, ASeriesWithoutChangeHasNoStep) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    for (std::size_t runs : {5u, 30u, 200u}) {
      const SeriesSteps found = find_steps(series(runs, {}, 0.02, seed), StepRule{});
      EXPECT_TRUE(found.steps.empty()) << "seed " << seed << ", " << runs << " runs";
    }
  }
  // Identical runs (one file copied night after night) neither.
  EXPECT_TRUE(find_steps(std::vector<double>(10, 5e5), StepRule{}).steps.empty());
}

TEST(StepDetection, TwoStepsInOneSeriesAreBothFound) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const SeriesSteps found = find_steps(series(36, {{12, 1.15}, {24, 1.03}}, 0.01, seed), StepRule{});
    ASSERT_EQ(found.steps.size(), 2u) << "seed " << seed;
    EXPECT_EQ(found.steps[0].run, 12u);
    EXPECT_EQ(found.steps[1].run, 24u);
    EXPECT_TRUE(found.steps[0].slowdown());
    EXPECT_FALSE(found.steps[1].slowdown());
    EXPECT_TRUE(found.faster_now());
    EXPECT_NEAR(found.steps[0].change_pct(), 15.0, 1.5);
    EXPECT_NEAR(found.steps[1].change_pct(), (1.03 / 1.15 - 1) * 100, 1.5);
  }
}

TEST(StepDetection, AStepInTheLatestTwoRunsIsFound) {
  const SeriesSteps found = find_steps(series(20, {{18, 1.2}}, 0.01, 5), StepRule{});
  ASSERT_EQ(found.steps.size(), 1u);
  EXPECT_EQ(found.steps[0].run, 18u);
  EXPECT_EQ(found.steps[0].runs_after, 2u);
  EXPECT_TRUE(found.slower_now());
}

TEST(StepDetection, ChangesOfMinChangeOrLessAreNoSteps) {
  const std::vector<double> values = series(20, {{10, 1.03}}, 0.002, 2);
  EXPECT_TRUE(find_steps(values, StepRule{}).steps.empty());  // 3% is within the default 5%
  StepRule finer;
  finer.min_change_pct = 2;
  const SeriesSteps found = find_steps(values, finer);
  ASSERT_EQ(found.steps.size(), 1u);
  EXPECT_EQ(found.steps[0].run, 10u);
}

TEST(StepDetection, GapsAreLeftOutAndRunsKeepTheirPositions) {
  std::vector<double> values = series(16, {{8, 1.2}}, 0.01, 4);
  values[3] = values[8] = values[9] = std::nan("");  // runs that did not measure the point
  const SeriesSteps found = find_steps(values, StepRule{});
  EXPECT_EQ(found.runs_seen, 13u);
  ASSERT_EQ(found.steps.size(), 1u);
  EXPECT_EQ(found.steps[0].run, 10u);  // the first run on the new level that measured it
  EXPECT_EQ(found.latest_run, 15u);
  const SeriesSteps none = find_steps(std::vector<double>(4, std::nan("")), StepRule{});
  EXPECT_EQ(none.runs_seen, 0u);
  EXPECT_TRUE(none.steps.empty());
}

TEST(StepDetection, IsTheSameOnEveryCall) {
  const std::vector<double> values = series(120, {{40, 1.1}, {90, 0.95}}, 0.02, 9);
  const SeriesSteps first = find_steps(values, StepRule{}), second = find_steps(values, StepRule{});
  ASSERT_EQ(first.steps.size(), second.steps.size());
  for (std::size_t i = 0; i < first.steps.size(); ++i) {
    EXPECT_EQ(first.steps[i].run, second.steps[i].run);
    EXPECT_EQ(first.steps[i].after_ns, second.steps[i].after_ns);
  }
}

}  // namespace
}  // namespace ks::testing
