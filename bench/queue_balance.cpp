// Load balance of the work queue: 200 points whose durations follow a log-normal distribution
// (median 20 ms, sigma 1, fixed seed), on 4 ranks, dynamic queue against static round robin.
// A point's duration is the test sleeper's setup time (sleeping, so oversubscribed ranks on a small
// machine do not compete for cores). Makespan: from the first point's start to the last point's end
// in /runs; ideal: max(sum of durations / ranks, longest point).
//   bench_queue_balance [RANKS] [POINTS]
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include <fmt/ranges.h>

#include "bench/harness.h"
#include "store/results_file.h"

namespace {

double seconds_since_epoch(const std::string& iso) {
  std::tm tm{};
  int ms = 0;
  std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
              &tm.tm_sec, &ms);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm)) + ms / 1e3;
}

double makespan(const std::filesystem::path& results) {
  double first = 1e300, last = 0;
  for (const auto& r : ks::ResultsFile::open_read_only(results).read_runs()) {
    first = std::min(first, seconds_since_epoch(r.started_at));
    last = std::max(last, seconds_since_epoch(r.ended_at));
  }
  return last - first;
}

}  // namespace

int main(int argc, char** argv) {
  const int ranks = argc > 1 ? std::atoi(argv[1]) : 4;
  const int points = argc > 2 ? std::atoi(argv[2]) : 200;
  std::mt19937_64 rng(20261130);
  std::lognormal_distribution<double> duration_ms(std::log(20.0), 1.0);
  std::vector<double> durations(static_cast<std::size_t>(points));
  for (double& d : durations) d = std::round(duration_ms(rng) * 10) / 10;
  std::vector<int> ids(durations.size());
  std::iota(ids.begin(), ids.end(), 1);
  const double total_s = std::accumulate(durations.begin(), durations.end(), 0.0) / 1e3;
  const double longest_s = *std::max_element(durations.begin(), durations.end()) / 1e3;
  const double ideal = std::max(total_s / ranks, longest_s);
  const std::string sweep = fmt::format(
      "name: balance\n{}kernels:\n  - kernel: test_sleep\n    implementations: [cpu]\n    modes: [forward]\n"
      "    zip: [[id, setup_ms]]\n    grid:\n      id: [{}]\n      setup_ms: [{}]\n",
      ks::bench::kBareProtocol, fmt::join(ids, ", "), fmt::join(durations, ", "));
  std::printf("queue balance: %d points, log-normal durations (median 20 ms, sigma 1), %d ranks\n", points, ranks);
  std::printf("sum %.2f s, longest %.3f s, ideal makespan %.3f s\n", total_s, longest_s, ideal);
  std::printf("%-8s %12s %10s %12s\n", "schedule", "makespan (s)", "ratio", "wall (s)");
  for (const std::string schedule : {"dynamic", "static"}) {
    const auto dir = ks::bench::scratch("balance-" + schedule);
    ks::bench::write_text(dir / "sweep.yaml", sweep);
    const auto timed = ks::bench::run_sweep(ranks, fmt::format("run {} --output-dir {} --schedule {} --check none",
                                                               (dir / "sweep.yaml").string(), dir.string(), schedule));
    const double span = makespan(dir / "balance.h5");
    std::printf("%-8s %12.3f %10.3f %12.2f\n", schedule.c_str(), span, span / ideal, timed.seconds);
  }
  return 0;
}
