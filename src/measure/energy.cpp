#include "measure/energy.h"

#include <algorithm>
#include <cmath>

namespace ks {
namespace {

// A batch fills about a tenth of the window, so the window ends at most a tenth past its minimum,
// and the synchronisations between batches (microseconds each) leave the device busy almost all of it.
constexpr double kBatchFraction = 0.1;
// Keeps a batch finite for a call whose estimate is 0 (too short for its timer).
constexpr std::int64_t kMaxBatchCalls = 1'000'000;

std::int64_t batch_calls(double call_estimate_s, double min_seconds) {
  const double budget_s = min_seconds * kBatchFraction;
  if (!(call_estimate_s > 0)) return kMaxBatchCalls;
  const double calls = std::floor(budget_s / call_estimate_s);
  if (!(calls < static_cast<double>(kMaxBatchCalls))) return kMaxBatchCalls;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(calls));
}

}  // namespace

EnergyFigure energy_per_call(const EnergyWindow& window) {
  const double used_mj = window.end_mj - window.start_mj;
  if (!(window.seconds >= kMinEnergyWindowS) || window.calls <= 0 || !(used_mj >= 0)) return {};
  return {used_mj / 1e3 / static_cast<double>(window.calls), window.seconds};
}

double gflops_per_joule(double flops_per_call, double joules_per_call) {
  if (!(flops_per_call > 0) || !(joules_per_call > 0)) return kNoEnergy;
  return flops_per_call / 1e9 / joules_per_call;
}

EnergyFigure point_energy(const EnergyWindow& timed, bool window_asked, const std::function<EnergyWindow()>& run_window) {
  const EnergyFigure from_timed = energy_per_call(timed);
  if (!std::isnan(from_timed.joules_per_call) || !window_asked || std::isnan(timed.start_mj)) return from_timed;
  return energy_per_call(run_window());
}

EnergyWindow run_energy_window(const EnergyProbe& probe, double call_estimate_s, double min_seconds) {
  const std::int64_t batch = batch_calls(call_estimate_s, min_seconds);
  EnergyWindow window;
  probe.synchronize();
  window.start_mj = probe.read_counter_mj();
  const double start_s = probe.now_s();
  do {
    for (std::int64_t i = 0; i < batch; ++i) probe.call();
    probe.synchronize();
    window.calls += batch;
    window.seconds = probe.now_s() - start_s;
  } while (window.seconds < min_seconds);
  window.end_mj = probe.read_counter_mj();
  return window;
}

}  // namespace ks
