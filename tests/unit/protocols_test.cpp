// The cold and graph protocols on a synthetic clock: the cold protocol's stopping rule on sample
// streams that converge, never converge and time out, its throttle handling on injected SM clock
// readings, the graph protocol's capture and replays with and without a flush, and what each
// protocol's document holds (its digest changes with each of its parameters and only with them).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/canonical_json.h"
#include "measure/cold.h"
#include "measure/graph.h"
#include "measure/protocol.h"
#include "record/run_record.h"
#include "support/measured_record.h"
#include "support/synthetic_timer.h"

namespace ks {
namespace {

using testing::SyntheticTimer;

BoundMode mode_of(SyntheticTimer& timer) {
  return {[&timer] { timer.run(); }, [] { return CheckResult{true, ""}; }};
}

Protocol cold_protocol(double max_noise = 0.005, std::int64_t min_samples = 10, double min_time_s = 0,
                       double timeout_s = 0.2) {
  ProtocolSpec spec;
  spec.name = "cold";
  spec.cold.max_noise = max_noise;
  spec.cold.min_samples = min_samples;
  spec.cold.min_time_s = min_time_s;
  spec.cold.timeout_s = timeout_s;
  spec.cold.throttle_pause_s = 0;
  return resolve_protocol(spec, Backend::cpu);
}

TEST(NoiseTracker, GivesTheSampleRelativeStandardDeviation) {
  NoiseTracker tracker;
  EXPECT_TRUE(std::isnan(tracker.relative_stddev()));
  for (const double ns : {90.0, 100.0, 110.0}) tracker.add(ns);
  EXPECT_EQ(tracker.count(), 3);
  EXPECT_DOUBLE_EQ(tracker.total_s(), 300e-9);
  EXPECT_NEAR(tracker.relative_stddev(), 10.0 / 100.0, 1e-12);  // stddev 10 (n - 1), mean 100
}

TEST(ColdVerdict, NeedsMinSamplesMinTimeAndTheNoiseGoal) {
  const Protocol protocol = cold_protocol(0.01, 4, 5e-6, 10);
  NoiseTracker steady;
  for (int i = 0; i < 3; ++i) steady.add(1000);
  EXPECT_EQ(cold_verdict(protocol, steady, 0), ColdVerdict::go_on);  // 3 samples < min_samples
  steady.add(1000);
  EXPECT_EQ(cold_verdict(protocol, steady, 0), ColdVerdict::go_on);  // 4 µs measured < min_time_s
  steady.add(1000);
  EXPECT_EQ(cold_verdict(protocol, steady, 0), ColdVerdict::goal_met);
  NoiseTracker noisy;
  for (int i = 0; i < 100; ++i) noisy.add(i % 2 ? 1000 : 2000);
  EXPECT_EQ(cold_verdict(protocol, noisy, 9.9), ColdVerdict::go_on);
  EXPECT_EQ(cold_verdict(protocol, noisy, 10), ColdVerdict::timed_out);
}

TEST(ColdProtocol, StopsOnceAConvergingStreamMeetsTheNoiseGoal) {
  // Two noisy samples, then steady ones: the noise falls below 1% once enough steady ones are in.
  std::vector<std::int64_t> durations{1'000'000, 1'000'000, 1'300'000, 700'000};
  for (int i = 0; i < 3000; ++i) durations.push_back(1'000'000);
  SyntheticTimer timer(durations, 0);
  const Timing timing = cold(mode_of(timer), timer, cold_protocol(0.011, 10));
  EXPECT_EQ(timing.noise.goal_met, 1);
  EXPECT_LE(timing.noise.noise, 0.011);
  EXPECT_GT(timing.noise.noise, 0);
  EXPECT_EQ(timing.n_repeat, static_cast<std::int64_t>(timing.samples_ns.size()));
  // The first call stays out of the samples; 1.3 and 0.7 ms are in. The mean stays 1 ms, so the
  // relative standard deviation is sqrt(0.18 / (n - 1)), at most 1.1% from n = 1489 on.
  EXPECT_EQ(timing.samples_ns.size(), 1489u);
  EXPECT_EQ(timer.holds(), static_cast<int>(timing.samples_ns.size()));
  EXPECT_EQ(timer.releases(), timer.holds());
  EXPECT_TRUE(timing.sample_sm_clock_mhz.empty()) << "no clock was read";
}

TEST(ColdProtocol, AStreamThatNeverConvergesStopsAtTheTimeoutWithTheGoalNotMet) {
  SyntheticTimer timer({1'000'000, 3'000'000}, 0);
  const auto start = std::chrono::steady_clock::now();
  const Timing timing = cold(mode_of(timer), timer, cold_protocol(0.005, 10, 0, 0.05));
  const double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(timing.noise.goal_met, 0);
  EXPECT_GT(timing.noise.noise, 0.4);
  EXPECT_GE(waited_s, 0.05);
  EXPECT_GT(timing.samples_ns.size(), 10u);
}

TEST(ColdProtocol, MinSamplesAndMinTimeHoldEvenForAQuietStream) {
  SyntheticTimer timer({1'000'000}, 0);
  const Timing few = cold(mode_of(timer), timer, cold_protocol(0.005, 25, 0));
  EXPECT_EQ(few.samples_ns.size(), 25u);
  SyntheticTimer timer2({1'000'000}, 0);
  const Timing long_enough = cold(mode_of(timer2), timer2, cold_protocol(0.005, 2, 0.040));
  EXPECT_EQ(long_enough.samples_ns.size(), 40u);  // 40 samples of 1 ms make min_time_s
  EXPECT_EQ(long_enough.noise.goal_met, 1);
}

TEST(ColdProtocol, SamplesUnderTheThrottleThresholdAreDroppedAndCounted) {
  // Peak 1980 MHz: 75% is 1485. Every third sample runs at 1230 MHz and takes 20% longer.
  std::vector<std::int64_t> durations{1'000'000};  // the first call
  std::vector<double> clocks;
  for (int i = 0; i < 300; ++i) {
    const bool slowed = i % 3 == 2;
    durations.push_back(slowed ? 1'200'000 : 1'000'000);
    clocks.push_back(slowed ? 1230 : 1560);
  }
  SyntheticTimer timer(durations, 0, clocks, 1980);
  const Timing timing = cold(mode_of(timer), timer, cold_protocol(0.005, 20));
  EXPECT_EQ(timing.noise.goal_met, 1);
  EXPECT_EQ(timing.samples_ns.size(), 20u);
  EXPECT_EQ(timing.noise.samples_dropped, 9);  // samples 3, 6, ... 27 of the 29 taken
  for (const double ns : timing.samples_ns) EXPECT_EQ(ns, 1'000'000);
  ASSERT_EQ(timing.sample_sm_clock_mhz.size(), 20u);
  for (const double mhz : timing.sample_sm_clock_mhz) EXPECT_EQ(mhz, 1560);
}

TEST(ColdProtocol, AGpuSlowedThroughoutFailsThePointNamingTheClock) {
  SyntheticTimer timer({1'000'000}, 0, {1000}, 1980);
  try {
    cold(mode_of(timer), timer, cold_protocol(0.005, 10, 0, 0.02));
    FAIL() << "no sample was kept, and cold returned";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("1485 MHz"), std::string::npos) << e.what();
  }
}

TEST(ColdProtocol, ACallThatThrowsReleasesTheStream) {
  SyntheticTimer timer({1'000'000}, 0);
  int calls = 0;
  const BoundMode failing{[&] {
                            if (++calls > 1) throw std::runtime_error("launch failed");
                          },
                          [] {
                            return CheckResult{true, ""};
                          }};
  EXPECT_THROW(cold(failing, timer, cold_protocol()), std::runtime_error);
  EXPECT_EQ(timer.holds(), 1);
  EXPECT_EQ(timer.releases(), 1);
}

Protocol graph_protocol(double rep_ms, std::int64_t replays, std::int64_t flush_bytes = 0) {
  ProtocolSpec spec;
  spec.name = "graph";
  spec.rep_ms = rep_ms;
  spec.replays = replays;
  spec.flush_bytes = flush_bytes;
  return resolve_protocol(spec, Backend::cpu);
}

TEST(GraphProtocol, ReplaysRepMsWorthOfCallsAndDividesEachReplayByTheCalls) {
  SyntheticTimer timer({2'000'000}, 500'000);
  const Timing timing = graph(mode_of(timer), timer, graph_protocol(20, 7));
  EXPECT_DOUBLE_EQ(timing.estimate_ms, 2.0);
  EXPECT_EQ(timing.n_repeat, 10);  // floor(20 / 2)
  EXPECT_EQ(timing.n_warmup, 0);
  EXPECT_EQ(timer.captures(), 1);
  ASSERT_EQ(timing.samples_ns.size(), 7u);
  for (const double ns : timing.samples_ns) EXPECT_EQ(ns, 2'000'000);  // no flush in the replays
  EXPECT_EQ(timer.calls(), 1 + 5 + 7 * 10u);
}

TEST(GraphProtocol, WithAFlushEachSampleIsOneReplayedCallAfterTheFlush) {
  SyntheticTimer timer({2'000'000}, 500'000);
  const Timing timing = graph(mode_of(timer), timer, graph_protocol(20, 7, 1 << 20));
  EXPECT_EQ(timing.n_repeat, 10);
  ASSERT_EQ(timing.samples_ns.size(), 10u);
  for (const double ns : timing.samples_ns) EXPECT_EQ(ns, 2'000'000);  // the flush is outside the marks
  EXPECT_EQ(timer.calls(), 1 + 5 + 10u);
}

TEST(GraphProtocol, CapsTheCallsAtMaxRepeat) {
  SyntheticTimer timer({1}, 0);  // a call too short to see: the estimate is guarded
  ProtocolSpec spec;
  spec.name = "graph";
  spec.max_repeat = 50;
  const Timing timing = graph(mode_of(timer), timer, resolve_protocol(spec, Backend::cpu));
  EXPECT_EQ(timing.n_repeat, 50);
}

// With sm_clock_per_sample (a GPU's default), do_bench and graph keep each sample's SM clock;
// without it, or where none is read (the CPU), none.
TEST(SampleClocks, DoBenchAndGraphKeepTheClockOfEachSample) {
  const std::vector<double> clocks{1980, 1755, 1410};
  Protocol protocol = cold_protocol();
  protocol.name = "do_bench";
  protocol.rep_ms = 10;
  protocol.sm_clock_per_sample = true;
  SyntheticTimer timer({1'000'000}, 0, clocks, 1980);
  const Timing timing = time_point(mode_of(timer), timer, protocol);
  ASSERT_EQ(timing.samples_ns.size(), 10u);
  ASSERT_EQ(timing.sample_sm_clock_mhz.size(), 10u);
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(timing.sample_sm_clock_mhz[i], clocks[i % 3]);

  protocol.name = "graph";
  SyntheticTimer graph_timer({1'000'000}, 0, clocks, 1980);
  const Timing replays = time_point(mode_of(graph_timer), graph_timer, protocol);
  EXPECT_EQ(replays.sample_sm_clock_mhz,
            (std::vector<double>{1980, 1755, 1410, 1980, 1755, 1410, 1980, 1755, 1410, 1980}));

  protocol.sm_clock_per_sample = false;
  SyntheticTimer unread({1'000'000}, 0, clocks, 1980);
  EXPECT_TRUE(time_point(mode_of(unread), unread, protocol).sample_sm_clock_mhz.empty());
  ProtocolSpec spec;
  EXPECT_FALSE(resolve_protocol(spec, Backend::cpu).sm_clock_per_sample) << "a CPU has no SM clock";
  EXPECT_TRUE(resolve_protocol(spec, Backend::cuda).sm_clock_per_sample);
}

// A sample under 10 µs has no clock (NaN) while longer ones of the same point have one: the record
// crosses the worker's pipe as JSON, which writes NaN as null, and the ranks' messages as bytes.
TEST(SampleClocks, AClockLeftUnreadCrossesTheWorkersMessagesAsUnread) {
  const double unread = std::numeric_limits<double>::quiet_NaN();
  Protocol protocol = cold_protocol();
  protocol.name = "do_bench";
  protocol.sm_clock_per_sample = true;
  SyntheticTimer timer({1'000'000}, 0, {unread, 1755}, 1980);
  const Timing timing = time_point(mode_of(timer), timer, protocol);
  const std::size_t samples = timing.samples_ns.size();
  ASSERT_GE(samples, 2u);
  ASSERT_EQ(timing.sample_sm_clock_mhz.size(), samples) << "a point with some clocks read keeps them all";

  RunRecord record;
  record.status = "passed";
  record.samples_ns = timing.samples_ns;
  record.sample_sm_clock_mhz = timing.sample_sm_clock_mhz;
  const RunRecord from_worker = run_record_from_json(nlohmann::json::parse(to_json(record).dump()));
  std::string bytes;
  append_run_record_bytes(bytes, from_worker);
  std::size_t offset = 0;
  const RunRecord back = run_record_from_bytes(bytes, offset);
  ASSERT_EQ(back.sample_sm_clock_mhz.size(), samples);
  for (std::size_t i = 0; i < samples; ++i) {
    if (std::isnan(timing.sample_sm_clock_mhz[i])) EXPECT_TRUE(std::isnan(back.sample_sm_clock_mhz[i])) << i;
    else EXPECT_EQ(back.sample_sm_clock_mhz[i], timing.sample_sm_clock_mhz[i]) << i;
  }
  EXPECT_TRUE(std::isnan(back.sample_sm_clock_mhz[0]));
  EXPECT_EQ(back.sample_sm_clock_mhz[1], 1755);
}

// A record crosses from a rank to rank 0 as bytes: every field, sample, clock and quantile comes back
// as it was, NaN included, and bytes cut short anywhere are refused rather than read as a record.
TEST(RunRecordBytes, EveryFieldComesBackAndBytesCutShortAreRefused) {
  RunRecord record = testing::cold_gpu_record();
  record.point_id = "3b1f9c2e";
  record.kernel = "distill_cosine_loss";
  record.implementation = "liger";
  record.mode = "full";
  record.params_json = R"({"tokens":1024})";
  record.status = "error";
  record.message = "RuntimeError: \"x\"\nline \xff";
  record.rank = 3;
  record.host = "gpu-node-017";
  record.gpu_uuid = "GPU-eaa14d9f";
  record.flops = 3.2e12;
  record.tflops = std::numeric_limits<double>::quiet_NaN();
  record.quantiles = {{0.5, 8.3e6}, {0.2, 8.1e6}, {0.8, 8.9e6}};
  record.repetition = 2;
  record.sample_sm_clock_min_mhz = 1757;
  record.sample_sm_clock_median_mhz = 1780.5;
  record.joules_per_call = 0.35;
  record.gflops_per_joule = 9142.9;
  record.energy_window_s = 1.04;

  std::string bytes = "head";
  append_run_record_bytes(bytes, record);
  append_sized_bytes(bytes, "tail");
  std::size_t offset = 4;
  const RunRecord back = run_record_from_bytes(bytes, offset);
  EXPECT_EQ(sized_bytes_at(bytes, offset), "tail");
  EXPECT_EQ(offset, bytes.size());
  EXPECT_EQ(to_json(back).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
            to_json(record).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  EXPECT_TRUE(std::isnan(back.tflops));
  EXPECT_TRUE(std::isnan(back.sample_sm_clock_mhz[1]));
  EXPECT_EQ(back.energy_window_s, 1.04);
  EXPECT_EQ(run_record_from_json(to_json(record)).joules_per_call, 0.35);
  EXPECT_EQ(back.quantiles.size(), 3u);
  EXPECT_EQ(back.quantiles[2].value_ns, 8.9e6);

  const std::size_t record_end = bytes.size() - 8 - 4;
  for (std::size_t cut = 4; cut < record_end; ++cut) {
    std::size_t at = 4;
    EXPECT_THROW(run_record_from_bytes(std::string_view(bytes).substr(0, cut), at), std::runtime_error) << cut;
  }
}

TEST(TimePoint, RunsTheLoopItsProtocolNames) {
  SyntheticTimer timer({1'000'000}, 0);
  EXPECT_EQ(time_point(mode_of(timer), timer, graph_protocol(10, 3)).samples_ns.size(), 3u);
  EXPECT_EQ(time_point(mode_of(timer), timer, cold_protocol(0.005, 12)).noise.goal_met, 1);
  ProtocolSpec unknown;
  unknown.name = "hot";
  EXPECT_THROW(resolve_protocol(unknown, Backend::cpu), std::invalid_argument);
}

// Every parameter a protocol uses changes its digest; one it does not use changes nothing.
TEST(ProtocolDocument, HoldsEachParameterOfItsProtocolAndNoOther) {
  const auto digest_of = [](const ProtocolSpec& spec) {
    return canonical_json(protocol_to_json(resolve_protocol(spec, Backend::cuda, 50 << 20)));
  };
  struct Change {
    const char* key;
    void (*apply)(ProtocolSpec&);
  };
  const std::vector<Change> changes{
      {"warmup_ms", [](ProtocolSpec& s) { s.warmup_ms = 1; }},
      {"rep_ms", [](ProtocolSpec& s) { s.rep_ms = 1; }},
      {"min_repeat", [](ProtocolSpec& s) { s.min_repeat = 3; }},
      {"max_repeat", [](ProtocolSpec& s) { s.max_repeat = 3; }},
      {"flush_bytes", [](ProtocolSpec& s) { s.flush_bytes = 3; }},
      {"quantiles", [](ProtocolSpec& s) { s.quantiles = {0.5}; }},
      {"max_noise", [](ProtocolSpec& s) { s.cold.max_noise = 0.01; }},
      {"min_samples", [](ProtocolSpec& s) { s.cold.min_samples = 3; }},
      {"min_time_s", [](ProtocolSpec& s) { s.cold.min_time_s = 3; }},
      {"timeout_s", [](ProtocolSpec& s) { s.cold.timeout_s = 3; }},
      {"throttle_threshold", [](ProtocolSpec& s) { s.cold.throttle_threshold = 0.5; }},
      {"throttle_pause_s", [](ProtocolSpec& s) { s.cold.throttle_pause_s = 1; }},
      {"replays", [](ProtocolSpec& s) { s.replays = 3; }},
      {"repetitions", [](ProtocolSpec& s) { s.repetitions = 3; }},
      {"sm_clock_per_sample", [](ProtocolSpec& s) { s.sm_clock_per_sample = false; }},
      {"energy", [](ProtocolSpec& s) { s.energy = true; }},
  };
  const std::map<std::string, std::set<std::string>> own{
      {"do_bench",
       {"warmup_ms", "rep_ms", "min_repeat", "max_repeat", "flush_bytes", "quantiles", "repetitions",
        "sm_clock_per_sample", "energy"}},
      {"cold",
       {"flush_bytes", "quantiles", "max_noise", "min_samples", "min_time_s", "timeout_s", "throttle_threshold",
        "throttle_pause_s", "repetitions", "energy"}},
      {"graph",
       {"rep_ms", "max_repeat", "flush_bytes", "quantiles", "replays", "repetitions", "sm_clock_per_sample", "energy"}},
  };
  for (const auto& [name, keys] : own) {
    ProtocolSpec base;
    base.name = name;
    const std::string before = digest_of(base);
    const Json document = protocol_to_json(resolve_protocol(base, Backend::cuda, 50 << 20));
    for (const Change& change : changes) {
      ProtocolSpec changed = base;
      change.apply(changed);
      const bool uses = keys.count(change.key) > 0;
      EXPECT_EQ(digest_of(changed) != before, uses) << name << " " << change.key;
      // A key written only where it is not its default (energy) is in the changed document.
      const Json changed_document = protocol_to_json(resolve_protocol(changed, Backend::cuda, 50 << 20));
      EXPECT_EQ(document.contains(change.key) || changed_document.contains(change.key), uses)
          << name << " " << change.key;
    }
  }
}

TEST(ProtocolDocument, ColdFlushesTheDevicesL2AndGraphNothingByDefault) {
  ProtocolSpec cold_spec;
  cold_spec.name = "cold";
  EXPECT_EQ(resolve_protocol(cold_spec, Backend::cuda, 50 << 20).flush_bytes, 50 << 20);
  EXPECT_EQ(resolve_protocol(cold_spec, Backend::cuda).flush_bytes, 256 << 20);  // L2 unknown: Triton's size
  EXPECT_TRUE(protocol_to_json(resolve_protocol(cold_spec, Backend::cuda)).at("hold_stream").get<bool>());
  EXPECT_FALSE(protocol_to_json(resolve_protocol(cold_spec, Backend::cpu)).at("hold_stream").get<bool>());
  ProtocolSpec graph_spec;
  graph_spec.name = "graph";
  EXPECT_EQ(resolve_protocol(graph_spec, Backend::cuda).flush_bytes, 0);
}

}  // namespace
}  // namespace ks
