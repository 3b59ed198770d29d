// The do_bench protocol on the CPU (call counts, repetition formulas, cap, zero-time guard),
// quantiles against numpy's "linear" method, the aggregates, and protocol resolution.
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "measure/do_bench.h"
#include "measure/gpu_state.h"

namespace ks {
namespace {

// A bound mode that counts its calls and busy-waits `call_time` in each (a busy wait, not a sleep,
// so that a call never lasts less than asked and rarely much more).
class CountingKernel {
 public:
  explicit CountingKernel(std::chrono::nanoseconds call_time = {}) : call_time_(call_time) {}

  BoundMode mode() {
    return {[this] {
              ++runs;
              const auto start = std::chrono::steady_clock::now();
              while (std::chrono::steady_clock::now() - start < call_time_) {}
            },
            [] {
              return CheckResult{true, ""};
            }};
  }

  std::int64_t runs = 0;

 private:
  std::chrono::nanoseconds call_time_;
};

BoundMode throwing_mode() {
  return {[] { throw std::runtime_error("kernel launch failed"); }, [] { return CheckResult{false, ""}; }};
}

Protocol cpu_protocol(double warmup_ms, double rep_ms, std::int64_t max_repeat = 10000,
                      std::int64_t flush_bytes = 1 << 20) {
  ProtocolSpec spec;
  spec.warmup_ms = warmup_ms;
  spec.rep_ms = rep_ms;
  spec.max_repeat = max_repeat;
  spec.flush_bytes = flush_bytes;
  return resolve_protocol(spec, Backend::cpu);
}

TEST(DoBench, RunsOnePlusFivePlusWarmupPlusRepeat) {
  CountingKernel kernel(std::chrono::microseconds(100));
  const Protocol protocol = cpu_protocol(2, 10);
  const Timing timing = do_bench(kernel.mode(), nullptr, protocol);

  EXPECT_EQ(kernel.runs, 1 + 5 + timing.n_warmup + timing.n_repeat);
  EXPECT_EQ(static_cast<std::int64_t>(timing.samples_ns.size()), timing.n_repeat);
  EXPECT_GE(timing.n_warmup, 1);
  EXPECT_GE(timing.n_repeat, 1);
}

TEST(DoBench, CountsFollowTheFormulasFromTheMeasuredEstimate) {
  CountingKernel kernel(std::chrono::microseconds(100));
  const Protocol protocol = cpu_protocol(2, 10);
  const Timing timing = do_bench(kernel.mode(), nullptr, protocol);
  // Every call busy-waits 100 µs, so the estimate (flush included) is at least 0.1 ms.
  EXPECT_GE(timing.estimate_ms, 0.1);
  const Timing expected = repetition_counts(timing.estimate_ms, protocol);
  EXPECT_EQ(timing.n_warmup, expected.n_warmup);
  EXPECT_EQ(timing.n_repeat, expected.n_repeat);
}

TEST(DoBench, EverySampleCoversItsCallAndOnlyOneCall) {
  CountingKernel kernel(std::chrono::microseconds(200));
  const Timing timing = do_bench(kernel.mode(), nullptr, cpu_protocol(1, 5));
  ASSERT_FALSE(timing.samples_ns.empty());
  // A monotonic clock read around a 200 µs busy wait cannot read less than 200 µs.
  for (double sample : timing.samples_ns) EXPECT_GE(sample, 200e3);
}

TEST(DoBench, RepetitionsAreCappedAtMaxRepeat) {
  CountingKernel kernel;  // calls take next to nothing: uncapped, rep_ms would ask for thousands
  const Timing timing = do_bench(kernel.mode(), nullptr, cpu_protocol(1, 50, /*max_repeat=*/3, /*flush_bytes=*/0));
  EXPECT_EQ(timing.n_repeat, 3);
  EXPECT_EQ(timing.samples_ns.size(), 3u);
  EXPECT_EQ(kernel.runs, 1 + 5 + timing.n_warmup + 3);
}

TEST(DoBench, CallsTooShortToSeeStillGiveFiniteCounts) {
  CountingKernel kernel;
  const Protocol protocol = cpu_protocol(1, 1, 10000, 0);
  const Timing timing = do_bench(kernel.mode(), nullptr, protocol);
  EXPECT_GE(timing.n_repeat, 1);
  EXPECT_LE(timing.n_repeat, protocol.max_repeat);
  EXPECT_EQ(static_cast<std::int64_t>(timing.samples_ns.size()), timing.n_repeat);
  for (double sample : timing.samples_ns) EXPECT_TRUE(std::isfinite(sample) && sample >= 0);
}

TEST(DoBench, WhatTheKernelThrowsPropagates) {
  EXPECT_THROW(do_bench(throwing_mode(), nullptr, cpu_protocol(1, 1)), std::runtime_error);
}

TEST(DoBench, CudaEventsNeedACudaBuild) {
#ifdef KERNELSWEEP_HAVE_CUDA
  GTEST_SKIP() << "this build has CUDA; the GPU tests time cuda_events";
#else
  CountingKernel kernel;
  Protocol protocol = cpu_protocol(1, 1);
  protocol.timer = "cuda_events";
  try {
    do_bench(kernel.mode(), nullptr, protocol);
    FAIL() << "cuda_events ran without CUDA";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("KERNELSWEEP_CUDA"), std::string::npos) << e.what();
  }
  EXPECT_EQ(kernel.runs, 0);
#endif
}

TEST(DoBench, UnknownTimerIsRefused) {
  CountingKernel kernel;
  Protocol protocol = cpu_protocol(1, 1);
  protocol.timer = "sundial";
  EXPECT_THROW(do_bench(kernel.mode(), nullptr, protocol), std::invalid_argument);
}

TEST(RepetitionCounts, FloorOfBudgetOverEstimate) {
  const Protocol protocol = cpu_protocol(25, 100);
  const Timing timing = repetition_counts(0.3, protocol);
  EXPECT_EQ(timing.n_warmup, 83);   // floor(25 / 0.3) = floor(83.33)
  EXPECT_EQ(timing.n_repeat, 333);  // floor(100 / 0.3) = floor(333.33)
  EXPECT_EQ(timing.estimate_ms, 0.3);
  EXPECT_TRUE(timing.samples_ns.empty());
}

TEST(RepetitionCounts, AtLeastOneOfEachForSlowCalls) {
  Protocol protocol = cpu_protocol(25, 100);
  protocol.min_repeat = 1;  // as on a GPU (Triton's floor)
  const Timing timing = repetition_counts(250, protocol);
  EXPECT_EQ(timing.n_warmup, 1);
  EXPECT_EQ(timing.n_repeat, 1);
}

TEST(RepetitionCounts, ZeroEstimateIsGuardedAndRepeatCapped) {
  const Protocol protocol = cpu_protocol(25, 100, 10000);
  const Timing timing = repetition_counts(0, protocol);
  EXPECT_EQ(timing.n_warmup, static_cast<std::int64_t>(std::floor(25 / kMinEstimateMs)));
  EXPECT_EQ(timing.n_repeat, 10000);
  EXPECT_EQ(repetition_counts(1e-300, protocol).n_repeat, 10000);
  EXPECT_EQ(repetition_counts(0.02, cpu_protocol(25, 100, 50)).n_repeat, 50);  // 5000 capped at 50
}

TEST(RepetitionCounts, MinRepeatRaisesTheCountAndMaxRepeatStillCapsIt) {
  Protocol protocol = cpu_protocol(25, 100);
  protocol.min_repeat = 10;
  EXPECT_EQ(repetition_counts(250, protocol).n_repeat, 10);   // rep_ms allows one
  EXPECT_EQ(repetition_counts(0.3, protocol).n_repeat, 333);  // rep_ms allows more
  protocol.max_repeat = 4;
  EXPECT_EQ(repetition_counts(250, protocol).n_repeat, 4);
}

// Reference values from numpy 1.24 (Debian's python3-numpy), for example:
//   /usr/bin/python3 -c 'import numpy as np; d=[3.1,1.0,7.25,2.5,9.0,4.75,6.0];
//     print([repr(float(np.quantile(d, q, method="linear"))) for q in (0.0,0.2,0.33,0.5,0.8,1.0)])'
const std::vector<double> kOdd = {3.1, 1.0, 7.25, 2.5, 9.0, 4.75, 6.0};
const std::vector<double> kEven = {12.5, 3.0, 8.25, 1.5, 30.0, 7.0, 7.0, 2.75, 19.5, 4.0};

std::vector<double> sorted(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values;
}

// quantile_linear of the values at q = 0, 0.2, 0.33, 0.5, 0.8 and 1 is numpy's, bit for bit.
void expect_numpy_quantiles(const std::vector<double>& values, const std::array<double, 6>& numpy) {
  const std::vector<double> s = sorted(values);
  const std::array<double, 6> qs = {0.0, 0.2, 0.33, 0.5, 0.8, 1.0};
  for (std::size_t i = 0; i < qs.size(); ++i) EXPECT_EQ(quantile_linear(s, qs[i]), numpy[i]) << "q " << qs[i];
}

TEST(Quantile, MatchesNumpyLinearOnAnOddCount) {
  expect_numpy_quantiles(kOdd, {1.0, 2.62, 3.088, 4.75, 7.000000000000001, 9.0});  // numpy's rounding at 0.8
}

TEST(Quantile, MatchesNumpyLinearOnAnEvenCount) {
  expect_numpy_quantiles(kEven, {1.5, 2.95, 3.97, 7.0, 13.900000000000002, 30.0});
}

TEST(Quantile, OneValueIsEveryQuantile) {
  for (double q : {0.0, 0.2, 0.5, 1.0}) EXPECT_EQ(quantile_linear({42.0}, q), 42.0);
}

TEST(Quantile, RefusesNoValuesAndQOutsideZeroOne) {
  EXPECT_THROW(quantile_linear({}, 0.5), std::invalid_argument);
  EXPECT_THROW(quantile_linear({1.0, 2.0}, -0.1), std::invalid_argument);
  EXPECT_THROW(quantile_linear({1.0, 2.0}, 1.5), std::invalid_argument);
  EXPECT_THROW(quantile_linear({1.0, 2.0}, std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
}

TEST(Quantile, QuantilesOfUnsortedSamplesComeInTheOrderAsked) {
  const auto quantiles = quantiles_of(kEven, {0.33, 0.8, 0.0});  // numpy's values, as above
  ASSERT_EQ(quantiles.size(), 3u);
  EXPECT_EQ(quantiles[0].quantile, 0.33);
  EXPECT_EQ(quantiles[0].value_ns, 3.97);
  EXPECT_EQ(quantiles[1].quantile, 0.8);
  EXPECT_EQ(quantiles[1].value_ns, 13.900000000000002);
  EXPECT_EQ(quantiles[2].value_ns, 1.5);
  EXPECT_TRUE(quantiles_of({}, {0.5}).empty());  // a point never timed has none
}

// What numpy gives for a list of samples: its quantiles at 0.5, 0.2 and 0.8, mean and sample
// standard deviation (ddof=1).
struct NumpySummary {
  double median, p20, p80, mean, stddev;
};

// summarize() of the samples, unsorted, against numpy's figures for them.
void expect_numpy_summary(const std::vector<double>& samples, const NumpySummary& numpy) {
  const Statistics stats = summarize(samples);
  EXPECT_EQ(stats.median_ns, numpy.median);
  EXPECT_EQ(stats.p20_ns, numpy.p20);
  EXPECT_EQ(stats.p80_ns, numpy.p80);
  EXPECT_DOUBLE_EQ(stats.mean_ns, numpy.mean);
  EXPECT_DOUBLE_EQ(stats.stddev_ns, numpy.stddev);
}

TEST(Summarize, MatchesNumpyOnUnsortedSamples) {
  // /usr/bin/python3 -c 'import numpy as np; d=[...]; print(repr(float(np.mean(d))), repr(float(np.std(d, ddof=1))))'
  expect_numpy_summary(
      kOdd, {.median = 4.75, .p20 = 2.62, .p80 = 7.000000000000001, .mean = 4.8, .stddev = 2.8197222085399356});
  const Statistics odd = summarize(kOdd);
  EXPECT_EQ(odd.min_ns, 1.0);
  EXPECT_EQ(odd.max_ns, 9.0);
  expect_numpy_summary(
      kEven, {.median = 7.0, .p20 = 2.95, .p80 = 13.900000000000002, .mean = 9.55, .stddev = 8.977440862765091});
}

TEST(Summarize, MedianOfAnEvenCountIsInterpolated) {
  const Statistics stats = summarize({4.0, 1.0, 2.0, 3.0});
  EXPECT_EQ(stats.median_ns, 2.5);  // torch.quantile(0.5) and numpy.median; torch.median would give 2
}

TEST(Summarize, OneSampleHasNoSpread) {
  const Statistics stats = summarize({5.0});
  EXPECT_EQ(stats.stddev_ns, 0.0);
  EXPECT_EQ(stats.median_ns, 5.0);
  EXPECT_EQ(stats.mean_ns, 5.0);
  EXPECT_THROW(summarize({}), std::invalid_argument);
}

TEST(Protocol, CpuResolvesToTheSteadyClockAndTheLastLevelCache) {
  const Protocol protocol = resolve_protocol(ProtocolSpec{}, Backend::cpu);
  EXPECT_EQ(protocol.timer, "steady_clock");
  EXPECT_EQ(protocol.flush_bytes, cpu_last_level_cache_bytes());
  EXPECT_GT(cpu_last_level_cache_bytes(), 0);
  EXPECT_EQ(protocol.warmup_ms, 25);
  EXPECT_EQ(protocol.rep_ms, 100);
  EXPECT_EQ(protocol.max_repeat, 10000);
  EXPECT_EQ(protocol.quantiles, (std::vector<double>{0.5, 0.2, 0.8}));
  EXPECT_EQ(protocol.quantile_method, "linear");
}

TEST(Protocol, CudaResolvesToEventsAnd256MiB) {
  const Protocol protocol = resolve_protocol(ProtocolSpec{}, Backend::cuda);
  EXPECT_EQ(protocol.timer, "cuda_events");
  EXPECT_EQ(protocol.flush_bytes, 268435456);
}

TEST(Protocol, AnExplicitFlushSizeWinsAndZeroTurnsItOff) {
  ProtocolSpec spec;
  spec.flush_bytes = 0;
  EXPECT_EQ(resolve_protocol(spec, Backend::cuda).flush_bytes, 0);
  spec.flush_bytes = 4096;
  EXPECT_EQ(resolve_protocol(spec, Backend::cpu).flush_bytes, 4096);
}

TEST(Protocol, MinRepeatIsOneOnAGpuAsTritonTenOnTheCpuUnlessGiven) {
  ProtocolSpec spec;
  EXPECT_EQ(resolve_protocol(spec, Backend::cuda).min_repeat, 1);
  EXPECT_EQ(resolve_protocol(spec, Backend::cpu).min_repeat, 10);
  spec.max_repeat = 4;  // the default never exceeds the cap
  EXPECT_EQ(resolve_protocol(spec, Backend::cpu).min_repeat, 4);
  spec.min_repeat = 3;
  EXPECT_EQ(resolve_protocol(spec, Backend::cuda).min_repeat, 3);
  EXPECT_EQ(resolve_protocol(spec, Backend::cpu).min_repeat, 3);
}

TEST(GpuState, ThrottleReasonsAreNamedAndUnknownBitsShownInHex) {
  EXPECT_EQ(throttle_reason_names(0), "");
  EXPECT_EQ(throttle_reason_names(throttle::kSwPowerCap | throttle::kHwThermalSlowdown),
            "sw_power_cap,hw_thermal_slowdown");
  EXPECT_EQ(throttle_reason_names(throttle::kGpuIdle | 0x10000), "gpu_idle,0x10000");
}

// Injected readings: a power cap or a slowdown at either end slows a measurement; an idle GPU before
// it, sync boost or the application clocks do not.
TEST(GpuState, OnlyPowerAndSlowdownReasonsCountAsSlowed) {
  EXPECT_FALSE(measured_while_slowed(0, 0));
  EXPECT_FALSE(measured_while_slowed(throttle::kGpuIdle, throttle::kApplicationsClocksSetting | throttle::kSyncBoost));
  EXPECT_TRUE(measured_while_slowed(throttle::kSwPowerCap, 0));
  EXPECT_TRUE(measured_while_slowed(0, throttle::kSwThermalSlowdown));
  EXPECT_TRUE(measured_while_slowed(throttle::kGpuIdle, throttle::kHwPowerBrakeSlowdown));
  EXPECT_TRUE(measured_while_slowed(throttle::kHwSlowdown | throttle::kGpuIdle, 0));
}

// Each test runs in a process of its own (gtest_discover_tests), so NVML is loaded here first.
TEST(GpuState, WithoutNvmlThereIsNoReaderAndTheReasonNamesTheLibrary) {
  ::setenv("KERNELSWEEP_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  std::string why_not;
  EXPECT_EQ(GpuStateReader::open("GPU-3b1f9c2e-8d4a-4f6b-9e21-7c5d0a8b6f13", why_not), nullptr);
  EXPECT_NE(why_not.find("NVML is not available"), std::string::npos) << why_not;
  EXPECT_NE(why_not.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << why_not;
}

TEST(Protocol, JsonHoldsEveryParameterOfTheMethod) {
  ProtocolSpec spec;
  spec.warmup_ms = 10;
  spec.flush_bytes = 123;
  const Json json = protocol_to_json(resolve_protocol(spec, Backend::cuda));
  std::set<std::string> keys;
  for (const auto& [key, value] : json.items()) keys.insert(key);
  EXPECT_EQ(keys, (std::set<std::string>{"name", "timer", "warmup_ms", "rep_ms", "min_repeat", "max_repeat",
                                         "flush_bytes", "quantiles", "quantile_method", "primaryStatistic",
                                         "repetitions", "sm_clock_per_sample"}));
  EXPECT_EQ(json.at("name"), "do_bench");
  EXPECT_EQ(json.at("timer"), "cuda_events");
  EXPECT_EQ(json.at("warmup_ms"), 10);
  EXPECT_EQ(json.at("flush_bytes"), 123);
  EXPECT_EQ(json.at("quantiles"), Json::array({0.5, 0.2, 0.8}));
  EXPECT_EQ(json.at("quantile_method"), "linear");
  EXPECT_EQ(json.at("primaryStatistic"), "median");
}

}  // namespace
}  // namespace ks
