#pragma once
// A point's energy per call, from NVML's total-energy counter (nvmlDeviceGetTotalEnergyConsumption:
// millijoules since the driver was loaded; Volta and later). On H100 and H200 the counter moves about
// every 100 ms, so over a window much shorter than a second its difference is 0 or one whole step:
// a figure is made only from a window of at least kMinEnergyWindowS of wall time, where a step is
// about a tenth of the total (docs/speed-of-light.md, "Energy").
#include <cstdint>
#include <functional>
#include <limits>

namespace ks {

inline constexpr double kMinEnergyWindowS = 1.0;
// A point's own timed repetitions are read at moments that fall anywhere between two steps of the
// counter: each end may be off by up to a step (about 100 ms of energy). Over ten seconds that is 1%
// or less; over one, 10%. Their figure is taken only from so long a span.
inline constexpr double kMinTimedEnergyWindowS = 10.0;
inline constexpr double kNoEnergy = std::numeric_limits<double>::quiet_NaN();

// The counter at a window's start and end, the window's wall time and the calls run in it.
struct EnergyWindow {
  double start_mj = kNoEnergy;
  double end_mj = kNoEnergy;
  double seconds = 0;
  std::int64_t calls = 0;
  // Whether the point's calls were all that ran in it: not so for timed repetitions with a flush
  // before each call, or the cold protocol's held stream, whose energy is no call's.
  bool calls_only = true;
  // An energy window of its own (run_energy_window) measures the device's power while the calls run
  // back to back, between two steps of the counter: a call's energy is that power times the call's
  // time (the point's median), in seconds. NaN: the energy over `calls`.
  double call_seconds = std::numeric_limits<double>::quiet_NaN();
};

// What a point records of its energy: joules per call and the window it came from; both NaN where
// no figure was made.
struct EnergyFigure {
  double joules_per_call = kNoEnergy;
  double window_s = kNoEnergy;
};

// The counter's difference over the window divided by its calls (or, for a window with
// `call_seconds`, the window's mean power times the call's time). No figure where the window is
// shorter than kMinEnergyWindowS, ran no call, or a reading is missing; nor where the counter went
// backwards (the driver reloaded between the readings).
EnergyFigure energy_per_call(const EnergyWindow& window);

// The point's FLOPs per call / 1e9 / its joules per call; NaN where its FLOPs are not counted or
// zero, or no energy figure was made.
double gflops_per_joule(double flops_per_call, double joules_per_call);

// A point's figure: from its timed repetitions where they spanned kMinTimedEnergyWindowS and ran
// nothing but its calls (`calls_only`); else, where
// `window_asked` (the protocol's `energy`) and the counter was read, from `run_window`, a window of
// its own run after them; else none.
EnergyFigure point_energy(const EnergyWindow& timed, bool window_asked,
                          const std::function<EnergyWindow()>& run_window);

// What an energy window needs of the device and the clock: one call of the point (queued), waiting
// for the queued calls to finish, the counter in millijoules (NaN where NVML cannot give it) and a
// wall clock in seconds.
struct EnergyProbe {
  std::function<void()> call;
  std::function<void()> synchronize;
  std::function<double()> read_counter_mj;
  std::function<double()> now_s;
};

// Queues the call back to back, ahead of the device (a lead of 50 ms, then a millisecond of calls and
// the reading's own time after each reading of the counter: by `call_seconds`, the point's median),
// and takes the device's power between two steps of the counter
// at least `min_seconds` apart, the first a whole step after the calls began (so that the device was
// busy over all of it): the window's figure is that power times `call_seconds`. Reading at the steps
// rather than at arbitrary moments is what makes a second enough: an arbitrary moment is up to a step
// (a tenth of a second) from the energy the counter holds. No figure (an unread window) where the
// counter does not move within ten times `min_seconds`.
EnergyWindow run_energy_window(const EnergyProbe& probe, double call_seconds, double min_seconds = kMinEnergyWindowS);

}  // namespace ks
