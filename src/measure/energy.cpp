#include "measure/energy.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

namespace ks {
namespace {

// The device must stay busy for the whole window: the calls are queued ahead of it, a lead of
// kLeadSeconds of calls first, then after each reading of the counter the calls of a millisecond
// plus those of the time the reading took (NVML may take a millisecond or more), so that the queue
// grows while the host reads (until the driver's queue is full and holds the host back). A step is
// seen within about a millisecond and a reading of when the counter shows it. At most 100,000 calls
// at once.
constexpr double kLeadSeconds = 0.05;
constexpr double kReadEverySeconds = 1e-3;
constexpr std::int64_t kMaxCallsAtOnce = 100'000;

std::int64_t calls_for(double seconds, double call_seconds) {
  const double calls = std::ceil(seconds / call_seconds);
  if (!(calls < static_cast<double>(kMaxCallsAtOnce))) return kMaxCallsAtOnce;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(calls));
}

}  // namespace

EnergyFigure energy_per_call(const EnergyWindow& window) {
  const double used_mj = window.end_mj - window.start_mj;
  if (!(window.seconds >= kMinEnergyWindowS) || window.calls <= 0 || !(used_mj >= 0)) return {};
  if (!std::isnan(window.call_seconds)) return {used_mj / 1e3 / window.seconds * window.call_seconds, window.seconds};
  return {used_mj / 1e3 / static_cast<double>(window.calls), window.seconds};
}

double gflops_per_joule(double flops_per_call, double joules_per_call) {
  if (!(flops_per_call > 0) || !(joules_per_call > 0)) return kNoEnergy;
  return flops_per_call / 1e9 / joules_per_call;
}

EnergyFigure point_energy(const EnergyWindow& timed, bool window_asked,
                          const std::function<EnergyWindow()>& run_window) {
  const bool timed_counts = timed.calls_only && timed.seconds >= kMinTimedEnergyWindowS;
  const EnergyFigure from_timed = timed_counts ? energy_per_call(timed) : EnergyFigure{};
  if (!std::isnan(from_timed.joules_per_call) || !window_asked || std::isnan(timed.start_mj)) return from_timed;
  return energy_per_call(run_window());
}

EnergyWindow run_energy_window(const EnergyProbe& probe, double call_seconds, double min_seconds) {
  EnergyWindow window;
  if (!(call_seconds > 0)) return window;  // a call too short for its timer: no power times its time
  probe.synchronize();
  const double began_s = probe.now_s();
  const double give_up_s = began_s + 10 * min_seconds;
  std::int64_t next_calls = calls_for(kLeadSeconds, call_seconds);
  // Keeps queuing calls until the counter moves past `from_mj`: when it did, and to what.
  const auto next_step = [&](double from_mj) -> std::pair<double, double> {
    for (;;) {
      for (std::int64_t i = 0; i < next_calls; ++i) probe.call();
      window.calls += next_calls;
      const double before_s = probe.now_s();
      const double mj = probe.read_counter_mj();
      const double now = probe.now_s();
      next_calls = calls_for(kReadEverySeconds + (now - before_s), call_seconds);
      if (mj != from_mj || std::isnan(mj) || now > give_up_s) return {now, mj};
    }
  };
  const double first_mj = next_step(probe.read_counter_mj()).second;
  auto [start_s, start_mj] = next_step(first_mj);  // a whole step after the calls began
  double end_s = start_s, end_mj = start_mj;
  while (end_s - start_s < min_seconds && !std::isnan(end_mj) && end_s <= give_up_s)
    std::tie(end_s, end_mj) = next_step(end_mj);
  probe.synchronize();
  if (std::isnan(start_mj) || std::isnan(end_mj) || end_s > give_up_s) return window;  // no figure
  window.start_mj = start_mj;
  window.end_mj = end_mj;
  window.seconds = end_s - start_s;
  window.call_seconds = call_seconds;
  return window;
}

}  // namespace ks
