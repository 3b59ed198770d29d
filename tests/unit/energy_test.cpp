// Energy per call (measure/energy.h): the arithmetic from two counter readings, the calls and the
// window; no figure from a window under a second; the choice between the timed repetitions and a
// window of the point's own; the window's loop on a synthetic clock and counter; and the calls each
// protocol runs between the readings around its timed repetitions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "cluster/worker_messages.h"
#include "measure/cold.h"
#include "measure/do_bench.h"
#include "measure/energy.h"
#include "measure/graph.h"
#include "measure/protocol.h"
#include "support/synthetic_timer.h"

namespace ks {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(EnergyPerCall, IsTheCountersDifferenceOverTheCallsInJoules) {
  // 1.2 s at about 300 W: 360,000 mJ over 1,200 calls of 1 ms.
  const EnergyFigure figure =
      energy_per_call({.start_mj = 5'000'000, .end_mj = 5'360'000, .seconds = 1.2, .calls = 1200});
  EXPECT_DOUBLE_EQ(figure.joules_per_call, 0.3);
  EXPECT_DOUBLE_EQ(figure.window_s, 1.2);
  // Exactly a second is enough.
  EXPECT_DOUBLE_EQ(energy_per_call({.start_mj = 0, .end_mj = 1000, .seconds = 1.0, .calls = 4}).joules_per_call, 0.25);
}

// Under a second the counter's difference is 0 or one whole step of about 100 ms: never a figure.
TEST(EnergyPerCall, AWindowUnderASecondGivesNoFigure) {
  for (const double seconds : {0.0, 0.1, 0.5, 0.999}) {
    const EnergyFigure figure = energy_per_call({.start_mj = 0, .end_mj = 30'000, .seconds = seconds, .calls = 100});
    EXPECT_TRUE(std::isnan(figure.joules_per_call)) << seconds;
    EXPECT_TRUE(std::isnan(figure.window_s)) << seconds;
  }
}

TEST(EnergyPerCall, NoCallsAMissingReadingOrACounterThatWentBackGiveNoFigure) {
  EXPECT_TRUE(std::isnan(energy_per_call({.start_mj = 0, .end_mj = 300, .seconds = 2, .calls = 0}).joules_per_call));
  EXPECT_TRUE(std::isnan(energy_per_call({.start_mj = kNaN, .end_mj = 300, .seconds = 2, .calls = 5}).joules_per_call));
  EXPECT_TRUE(std::isnan(energy_per_call({.start_mj = 0, .end_mj = kNaN, .seconds = 2, .calls = 5}).joules_per_call));
  EXPECT_TRUE(std::isnan(energy_per_call({.start_mj = 900, .end_mj = 300, .seconds = 2, .calls = 5}).joules_per_call));
  EXPECT_TRUE(std::isnan(energy_per_call({.start_mj = 0, .end_mj = 300, .seconds = kNaN, .calls = 5}).joules_per_call));
  // A counter that did not move over a second is a figure: the device used nothing measurable.
  EXPECT_EQ(energy_per_call({.start_mj = 300, .end_mj = 300, .seconds = 1.5, .calls = 5}).joules_per_call, 0);
}

TEST(GflopsPerJoule, IsTheFlopsOverTheJoulesAndNaNWithoutFlopsOrEnergy) {
  // A 4096^3 product: 2 * 4096^3 FLOP, at 0.35 J a call.
  const double flops = 2.0 * 4096 * 4096 * 4096;
  EXPECT_DOUBLE_EQ(gflops_per_joule(flops, 0.35), flops / 1e9 / 0.35);
  EXPECT_TRUE(std::isnan(gflops_per_joule(kNaN, 0.35))) << "flops not counted";
  EXPECT_TRUE(std::isnan(gflops_per_joule(0, 0.35))) << "no flops";
  EXPECT_TRUE(std::isnan(gflops_per_joule(flops, kNaN))) << "no energy figure";
  EXPECT_TRUE(std::isnan(gflops_per_joule(flops, 0))) << "a counter that did not move";
}

// The window of a point's own that point_energy may run: it reads `measured`, and counts its runs.
struct OwnWindow {
  EnergyWindow measured;
  int runs = 0;

  std::function<EnergyWindow()> runner() {
    return [this] {
      ++runs;
      return measured;
    };
  }
};

TEST(PointEnergy, TimedRepetitionsOfTenSecondsAreTheFigureAndNoWindowRuns) {
  OwnWindow window;
  const EnergyWindow timed{.start_mj = 0, .end_mj = 6'000'000, .seconds = 12, .calls = 30000};
  for (const bool asked : {false, true}) {
    const EnergyFigure figure = point_energy(timed, asked, window.runner());
    EXPECT_DOUBLE_EQ(figure.joules_per_call, 0.2);
    EXPECT_DOUBLE_EQ(figure.window_s, 12);
  }
  EXPECT_EQ(window.runs, 0);
  // A second and a half of timed repetitions is a window, but read at arbitrary moments: up to a
  // tenth off at each end. No figure of its own; a window where the protocol asks for one.
  const EnergyWindow short_timed{.start_mj = 0, .end_mj = 600'000, .seconds = 1.5, .calls = 3000};
  EXPECT_TRUE(std::isnan(point_energy(short_timed, false, window.runner()).joules_per_call));
  EXPECT_EQ(window.runs, 0);
  point_energy(short_timed, true, window.runner());
  EXPECT_EQ(window.runs, 1);
}

TEST(PointEnergy, TimedRepetitionsWithAFlushBetweenTheCallsAreNoCallsFigure) {
  OwnWindow window{.measured = {.start_mj = 0, .end_mj = 300'000, .seconds = 1.2, .calls = 3000}};
  const EnergyWindow flushed{.start_mj = 0, .end_mj = 6'000'000, .seconds = 12, .calls = 30000, .calls_only = false};
  EXPECT_TRUE(std::isnan(point_energy(flushed, false, window.runner()).joules_per_call));
  EXPECT_EQ(window.runs, 0);
  const EnergyFigure asked = point_energy(flushed, true, window.runner());
  EXPECT_DOUBLE_EQ(asked.joules_per_call, 0.1);  // the window's calls alone
  EXPECT_DOUBLE_EQ(asked.window_s, 1.2);
  EXPECT_EQ(window.runs, 1);
}

TEST(PointEnergy, ShortTimedRepetitionsGiveAFigureOnlyFromAWindowTheProtocolAsksFor) {
  OwnWindow window{.measured = {.start_mj = 100, .end_mj = 500'100, .seconds = 1.05, .calls = 1000}};
  const EnergyWindow short_timed{.start_mj = 0, .end_mj = 0, .seconds = 0.1, .calls = 400};
  const EnergyFigure not_asked = point_energy(short_timed, false, window.runner());
  EXPECT_TRUE(std::isnan(not_asked.joules_per_call));
  EXPECT_EQ(window.runs, 0);
  const EnergyFigure asked = point_energy(short_timed, true, window.runner());
  EXPECT_DOUBLE_EQ(asked.joules_per_call, 0.5);
  EXPECT_DOUBLE_EQ(asked.window_s, 1.05);
  EXPECT_EQ(window.runs, 1);
  // A GPU without the counter: no window is run for nothing.
  const EnergyWindow unread{.start_mj = kNaN, .end_mj = kNaN, .seconds = 0.1, .calls = 400};
  EXPECT_TRUE(std::isnan(point_energy(unread, true, window.runner()).joules_per_call));
  EXPECT_EQ(window.runs, 1);
}

// A device of a synthetic clock and counter, as NVML's behaves: each call runs `call_s` drawing
// `watts` (the host's clock moves with the device's, its queue always full), and the counter shows
// the energy used up to its last step, one every `step_s`.
struct SyntheticDevice {
  SyntheticDevice(double call_seconds, double draw_watts, double step_seconds = 0.1)
      : call_s(call_seconds), watts(draw_watts), step_s(step_seconds) {}

  double call_s, watts, step_s;
  double now = 100.05, used_mj = 7'000'000;  // 50 ms past a step
  std::int64_t calls = 0, readings = 0;

  double shown_mj() const {
    const double since_step = std::fmod(now, step_s);
    return used_mj - since_step * watts * 1e3;
  }
  EnergyProbe probe() {
    return {[this] {
              ++calls;
              now += call_s;
              used_mj += call_s * watts * 1e3;
            },
            [] {},
            [this] {
              ++readings;
              return std::round(shown_mj());
            },
            [this] { return now; }};
  }
};

TEST(EnergyWindowLoop, TakesThePowerBetweenTwoStepsOfTheCounterASecondApartTimesTheCall) {
  SyntheticDevice device(0.003, 500);
  const EnergyWindow window = run_energy_window(device.probe(), 0.003);
  EXPECT_GE(window.seconds, kMinEnergyWindowS);
  EXPECT_LT(window.seconds, kMinEnergyWindowS + 0.1 + 0.004) << "it ends at the first step past a second";
  EXPECT_DOUBLE_EQ(window.call_seconds, 0.003);
  EXPECT_GT(device.calls, window.calls - 1);
  // Read after every call (a millisecond holds none whole), each step seen within a call of it: the
  // power within a few tenths of a percent, whatever the moment the window began.
  EXPECT_NEAR(energy_per_call(window).joules_per_call, 0.003 * 500, 0.003 * 500 * 0.01);
}

TEST(EnergyWindowLoop, ShortCallsAreReadAboutEveryMillisecondAndTheFigureHolds) {
  SyntheticDevice device(20e-6, 650);
  const EnergyWindow window = run_energy_window(device.probe(), 20e-6);
  // A lead of 50 ms (2,500 calls), then 50 calls (a millisecond) between readings.
  EXPECT_NEAR(static_cast<double>(device.calls - 2500) / static_cast<double>(device.readings - 2), 50, 1);
  EXPECT_NEAR(energy_per_call(window).joules_per_call, 20e-6 * 650, 20e-6 * 650 * 0.01);
}

TEST(EnergyWindowLoop, ACounterThatNeverMovesGivesNoFigureAndTheLoopEnds) {
  SyntheticDevice device(0.01, 300, 1e9);  // a step every 30 years
  const EnergyWindow window = run_energy_window(device.probe(), 0.01);
  EXPECT_TRUE(std::isnan(energy_per_call(window).joules_per_call));
  EXPECT_LE(device.now - 100.05, 10 * kMinEnergyWindowS + 0.02);
}

TEST(EnergyWindowLoop, ACallTooShortForItsTimerGetsNoFigure) {
  SyntheticDevice device(0.001, 300);
  EXPECT_TRUE(std::isnan(energy_per_call(run_energy_window(device.probe(), 0)).joules_per_call));
  EXPECT_EQ(device.calls, 0);
}

// The calls run between a protocol's `before` and `after`, as the synthetic timer counts them, are
// what its timed_calls says: what the energy across the timed repetitions is divided by.
std::int64_t calls_between_readings(testing::SyntheticTimer& timer, const Protocol& protocol, Timing& timing) {
  std::size_t at_before = 0, at_after = 0;
  const BoundMode mode{[&timer] { timer.run(); }, [] { return CheckResult{true, ""}; }};
  timing = time_point(mode, timer, protocol, {[&] { at_before = timer.calls(); }, [&] { at_after = timer.calls(); }});
  return static_cast<std::int64_t>(at_after - at_before);
}

TEST(TimedCalls, EachProtocolCountsTheCallsBetweenItsReadings) {
  ProtocolSpec do_bench_spec;
  do_bench_spec.rep_ms = 20;
  ProtocolSpec graph_spec;
  graph_spec.name = "graph";
  graph_spec.rep_ms = 20;
  graph_spec.replays = 7;
  ProtocolSpec flushed_graph_spec = graph_spec;
  flushed_graph_spec.flush_bytes = 1 << 20;
  ProtocolSpec cold_spec;
  cold_spec.name = "cold";
  cold_spec.cold.min_samples = 20;
  cold_spec.cold.min_time_s = 0;
  cold_spec.cold.throttle_pause_s = 0;
  for (const ProtocolSpec& spec : {do_bench_spec, graph_spec, flushed_graph_spec}) {
    testing::SyntheticTimer timer({2'000'000}, 500'000);
    Timing timing;
    const std::int64_t calls = calls_between_readings(timer, resolve_protocol(spec, Backend::cpu), timing);
    EXPECT_GT(timing.timed_calls, 0) << spec.name;
    EXPECT_EQ(timing.timed_calls, calls) << spec.name << " flush " << spec.flush_bytes.value_or(-1);
  }
  // Cold: every third sample runs under the throttle threshold and is dropped; its call ran all the same.
  testing::SyntheticTimer throttled({1'000'000}, 0, {1560, 1560, 1230}, 1980);
  Timing timing;
  const std::int64_t calls = calls_between_readings(throttled, resolve_protocol(cold_spec, Backend::cpu), timing);
  EXPECT_GT(timing.noise.samples_dropped, 0);
  EXPECT_EQ(timing.timed_calls, calls);
}

// The protocol's `energy` travels to the worker, is kept on a GPU only (a CPU has no counter), and
// appears in the protocol's document only where asked, so that other sweeps keep their digests.
TEST(EnergyProtocol, TravelsToTheWorkerAndIsAskedOfAGpuOnly) {
  ProtocolSpec spec;
  EXPECT_FALSE(to_json(spec).contains("energy"));
  EXPECT_FALSE(protocol_to_json(resolve_protocol(spec, Backend::cuda)).contains("energy"));
  spec.energy = true;
  EXPECT_TRUE(protocol_spec_from_json(to_json(spec)).energy);
  EXPECT_TRUE(resolve_protocol(spec, Backend::cuda).energy);
  EXPECT_EQ(protocol_to_json(resolve_protocol(spec, Backend::cuda)).at("energy"), true);
  EXPECT_FALSE(resolve_protocol(spec, Backend::cpu).energy);
  EXPECT_FALSE(protocol_to_json(resolve_protocol(spec, Backend::cpu)).contains("energy"));
}

}  // namespace
}  // namespace ks
