#include "measure/cold.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <utility>

#include <fmt/format.h>

namespace ks {
namespace {

using WallClock = std::chrono::steady_clock;

double seconds_since(WallClock::time_point start) {
  return std::chrono::duration<double>(WallClock::now() - start).count();
}

// Lets the stream go however the sample ends: a call that throws must not leave the GPU spinning.
class Hold {
 public:
  explicit Hold(BenchTimer& timer) : timer_(timer) { timer_.hold(); }
  ~Hold() { timer_.release(); }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;

 private:
  BenchTimer& timer_;
};

struct Sample {
  double ns;
  double sm_clock_mhz;  // NaN where not read
};

Sample take_sample(const BoundMode& mode, BenchTimer& timer) {
  timer.flush();
  timer.reserve_clocks(1);  // the one clock, unread again
  {
    Hold hold(timer);
    timer.start_clock(0);
    timer.record(0);
    mode.run();
    timer.record(1);
    timer.stop_clock(0);
  }
  timer.synchronize();
  return {timer.elapsed_ns(0, 1), timer.sm_clocks_mhz(1).front()};
}

}  // namespace

void NoiseTracker::add(double sample_ns) {
  ++count_;
  total_ns_ += sample_ns;
  const double delta = sample_ns - mean_;
  mean_ += delta / static_cast<double>(count_);
  squares_ += delta * (sample_ns - mean_);
}

double NoiseTracker::relative_stddev() const {
  if (count_ < 2) return std::nan("");
  return std::sqrt(squares_ / static_cast<double>(count_ - 1)) / mean_;
}

ColdVerdict cold_verdict(const Protocol& protocol, const NoiseTracker& kept, double elapsed_s) {
  const bool enough = kept.count() >= protocol.cold.min_samples && kept.total_s() >= protocol.cold.min_time_s;
  if (enough && kept.relative_stddev() <= protocol.cold.max_noise) return ColdVerdict::goal_met;
  if (elapsed_s >= protocol.cold.timeout_s) return ColdVerdict::timed_out;
  return ColdVerdict::go_on;
}

Timing cold(const BoundMode& mode, BenchTimer& timer, const Protocol& protocol, const TimedPhase& phase) {
  mode.run();  // lazy initialisation (a first cuBLAS call, autotuning) stays out of the samples
  timer.synchronize();
  timer.reserve_marks(2);
  // A clock that is not read (NaN) never drops a sample: NaN compares false.
  const double slowest_kept_mhz = protocol.cold.throttle_threshold * timer.default_sm_clock_mhz();

  Timing timing;
  timing.n_warmup = 1;
  NoiseTracker kept;
  if (phase.before) phase.before();
  const WallClock::time_point start = WallClock::now();
  for (ColdVerdict verdict = ColdVerdict::go_on; verdict == ColdVerdict::go_on;) {
    const Sample sample = take_sample(mode, timer);
    if (sample.sm_clock_mhz < slowest_kept_mhz) {
      ++timing.noise.samples_dropped;
      if (seconds_since(start) >= protocol.cold.timeout_s) break;
      std::this_thread::sleep_for(std::chrono::duration<double>(protocol.cold.throttle_pause_s));
      continue;
    }
    timing.samples_ns.push_back(sample.ns);
    timing.sample_sm_clock_mhz.push_back(sample.sm_clock_mhz);
    kept.add(sample.ns);
    verdict = cold_verdict(protocol, kept, seconds_since(start));
    timing.noise.goal_met = verdict == ColdVerdict::goal_met ? 1 : 0;
  }
  if (phase.after) phase.after();

  if (timing.samples_ns.empty())
    throw std::runtime_error(fmt::format(
        "cold: all {} samples in timeout_s ({} s) ran with the SM clock under {} of its peak ({:.0f} MHz) and were "
        "dropped",
        timing.noise.samples_dropped, protocol.cold.timeout_s, protocol.cold.throttle_threshold, slowest_kept_mhz));
  timing.noise.noise = kept.relative_stddev();
  timing.n_repeat = kept.count();
  timing.timed_calls = timing.n_repeat + timing.noise.samples_dropped;  // a dropped sample ran its call too
  keep_clocks_read(std::exchange(timing.sample_sm_clock_mhz, {}), timing);
  return timing;
}

}  // namespace ks
