#pragma once
// The steps of one point's series of medians: where its level shifts and stays, told from the
// run-to-run noise of that same series (docs/history.md, "The method").
//
//   1. The noise: sigma, the spread of one run's median about its level, estimated from the changes
//      between successive runs (robust to the steps themselves, which are a few of those changes):
//      sigma = 1.4826 × median(|x[i+1] - x[i]|) / √2, at least noise_floor × the series' median.
//   2. The levels: the optimal segmentation of the series (history/segmentation.h), every level held
//      for min_runs runs or more, with a penalty of penalty_sigmas × sigma per boundary.
//   3. The steps: each boundary is kept only where the two levels (the medians of the segments on
//      either side) differ by more than z standard errors of that difference, the standard error
//      being sigma × √(π/2 × (1/n_before + 1/n_after)) and z that of a two-sided test at
//      false_alarm_rate over the n - 1 places a step could begin in n runs (Bonferroni: 3.3 for 10
//      runs, 4.2 for 365), and by more than min_change_pct percent, and where min_runs runs of each
//      segment lie nearer its own level than the other; the weakest boundary that is not (the
//      smallest change) is merged away and the levels around it computed again, until every boundary
//      left is a step.
//
// A single outlying run is never a step: a level must hold for min_runs runs. The latest run alone
// off its level cannot be told from an outlier yet: it is reported apart (`pending`), as a step
// would be, where it passes the same two tests against the level before it.
// Everything is deterministic: no randomness, ties go to the earliest run.
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace ks::history {

struct StepRule {
  double min_change_pct = 5;  // --min-change: a smaller change of level is no step
  std::size_t min_runs = 2;   // the runs a level must hold for
  double penalty_sigmas = 4;  // the segmentation's penalty per boundary, in sigmas
  // The significance of a step: two levels are told apart where they differ by more than the z of a
  // two-sided normal test at this rate, spread over the places a step could begin (Bonferroni).
  double false_alarm_rate = 0.01;
  double noise_floor = 0.001;  // sigma is at least this fraction of the series' median level
};

// A shift of the level: the new level begins at `run`.
struct Step {
  std::size_t run = 0;         // the position, in the series (gaps included), of the first run on the new level
  double before_ns = 0;        // the level before: the median of the runs since the previous step
  double after_ns = 0;         // the level after: the median of the runs up to the next step
  std::size_t runs_after = 0;  // how many runs measured the new level
  double change_pct() const { return (after_ns / before_ns - 1) * 100; }
  bool slowdown() const { return after_ns > before_ns; }
};

// What the steps of one series say.
struct SeriesSteps {
  std::size_t runs_seen = 0;           // the runs with a median (the others are gaps)
  double first_ns = 0, latest_ns = 0;  // the first and the latest median
  std::size_t latest_run = 0;          // the position of the latest median
  double noise_ns = 0;                 // sigma
  double level_ns = 0;                 // the latest level: the median of the runs since the last step
  std::vector<Step> steps;
  // The latest run alone away from the level before it, by as much as a step would be: a step if the
  // next run agrees, an outlier if it does not. Its `after_ns` is the latest median, `runs_after` 1.
  std::optional<Step> pending;
  // Whether the latest level is slower than the one before it (the last step is a slowdown).
  bool slower_now() const { return !steps.empty() && steps.back().slowdown(); }
  bool faster_now() const { return !steps.empty() && !steps.back().slowdown(); }
};

// The steps of `medians_ns`, one median per run in the history's order, NaN where the run did not
// measure the point (a gap: left out of the series, which the positions still count). A series with
// no median gives runs_seen 0 and nothing else.
SeriesSteps find_steps(std::span<const double> medians_ns, const StepRule& rule);

// sigma of a series without gaps (step 1 above).
double series_noise(std::span<const double> values, double noise_floor);

}  // namespace ks::history
