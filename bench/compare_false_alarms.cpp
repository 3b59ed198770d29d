// How often `kernelsweep compare` calls a point faster or slower when nothing changed, and whether a
// 30% slowdown is still caught: RUNS runs of one build of one sweep (sleepers and small CPU gemms,
// the default protocol, 2 ranks under mpirun), every pair of runs compared point by point with
// compare's rule (report/compare_rule.h) at several thresholds. A false alarm is a point labelled
// faster or slower; "caught" counts the points labelled slower once NEW's samples are multiplied
// by 1.3 (the same noise, a kernel 30% slower).
//   bench_compare_false_alarms [RUNS=8] [--reuse]     --reuse: keep the runs already in the scratch folder
// Figures: bench/results/compare-cpu2.md.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/harness.h"
#include "report/compare_rule.h"
#include "store/results_file.h"

namespace {

using ks::Change;

constexpr const char* kSweep = R"(name: noise
kernels:
  - kernel: test_sleep
    implementations: [cpu]
    modes: [forward]
    grid: {id: {from: 1, to: 8, step: 1}, run_ms: [0.1, 1.0, 3.0]}
  - kernel: gemm
    implementations: [cpu]
    grid: {M: [32, 64, 128], N: [32, 128], K: [64, 256]}
    fixed: {dtype: fp32}
)";

constexpr double kThresholds[] = {0.01, 0.02, 0.03, 0.05, 0.075, 0.10, 0.15, 0.20};

struct Point {
  std::string kernel;
  std::vector<double> samples;
};
using Run = std::map<std::string, Point>;  // by point id

Run read_run(const std::filesystem::path& path) {
  const ks::ResultsFile file = ks::ResultsFile::open_read_only(path);
  Run run;
  for (const ks::StoredRun& r : file.read_runs())
    if (r.status == "passed") run[r.point_id] = {r.kernel, file.read_samples(r.samples_offset, r.samples_count)};
  return run;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return fmt::format("{} {} {}", one, five, fifteen);
}

// Per kernel, per threshold: labels of the unchanged comparisons, and slowdowns caught.
struct Tally {
  std::size_t comparisons = 0;
  std::map<double, std::map<Change, std::size_t>> unchanged;
  std::map<double, std::size_t> caught;
  std::vector<double> log_ratios;  // |log(new median / base median)| of the unchanged comparisons
  std::size_t min_samples = SIZE_MAX, max_samples = 0;
};

double quantile_of(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 8;
  const bool reuse = argc > 2 && std::strcmp(argv[2], "--reuse") == 0;
  const auto dir = std::filesystem::temp_directory_path() / "kernelsweep-bench-compare_false_alarms";
  if (!reuse) std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ks::bench::write_text(dir / "noise.yaml", kSweep);

  std::vector<Run> results;
  for (int i = 0; i < runs; ++i) {
    const auto out = dir / fmt::format("run{}", i);
    const auto file = out / "noise.h5";
    if (!reuse || !std::filesystem::exists(file)) {
      const std::string load = load_average();
      const double seconds = ks::bench::run_sweep(2, fmt::format("run {} --output-dir {} --overwrite",
                                                                 (dir / "noise.yaml").string(), out.string()))
                                 .seconds;
      fmt::print("run {}: {:.1f} s, load average before it {}\n", i, seconds, load);
    }
    results.push_back(read_run(file));
  }

  ks::ChangeJudge judge;  // the intervals do not depend on the threshold: one judge serves them all
  std::map<std::string, Tally> tallies;
  for (int a = 0; a < runs; ++a) {
    for (int b = a + 1; b < runs; ++b) {
      for (const auto& [id, base] : results[a]) {
        const auto found = results[b].find(id);
        if (found == results[b].end()) continue;
        std::vector<double> slowed = found->second.samples;
        for (double& s : slowed) s *= 1.3;
        const ks::Verdict same = judge.judge(base.samples, found->second.samples);
        const ks::Verdict slower = judge.judge(base.samples, slowed);
        for (const std::string& kernel : {base.kernel, std::string("all")}) {
          Tally& t = tallies[kernel];
          ++t.comparisons;
          t.log_ratios.push_back(std::abs(std::log(same.ratio)));
          t.min_samples = std::min({t.min_samples, base.samples.size(), found->second.samples.size()});
          t.max_samples = std::max({t.max_samples, base.samples.size(), found->second.samples.size()});
          for (double threshold : kThresholds) {
            ++t.unchanged[threshold][same.has_interval ? ks::change_of(same.interval, threshold) : Change::unclear];
            t.caught[threshold] += slower.has_interval && ks::change_of(slower.interval, threshold) == Change::slower;
          }
        }
      }
    }
  }

  fmt::print("\n{} runs, {} pairs; load average now {}\n\n", runs, runs * (runs - 1) / 2, load_average());
  fmt::print(
      "| points | comparisons | samples per point | run-to-run change of the median: median, 99th pct, max |\n"
      "| --- | ---: | --- | --- |\n");
  for (const auto& [kernel, t] : tallies)
    fmt::print("| {} | {} | {}..{} | {:.2f}%, {:.2f}%, {:.2f}% |\n", kernel, t.comparisons, t.min_samples,
               t.max_samples, (std::exp(quantile_of(t.log_ratios, 0.5)) - 1) * 100,
               (std::exp(quantile_of(t.log_ratios, 0.99)) - 1) * 100,
               (std::exp(quantile_of(t.log_ratios, 1.0)) - 1) * 100);
  fmt::print(
      "\n| points | T | same | unclear | faster | slower | false alarms | 30% slower caught |\n"
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& [kernel, t] : tallies) {
    for (double threshold : kThresholds) {
      const auto& labels = t.unchanged.at(threshold);
      const auto count = [&](Change c) { return labels.count(c) ? labels.at(c) : std::size_t{0}; };
      const std::size_t alarms = count(Change::faster) + count(Change::slower);
      fmt::print("| {} | {:g}% | {} | {} | {} | {} | {:.2f}% | {:.1f}% |\n", kernel, threshold * 100,
                 count(Change::same), count(Change::unclear), count(Change::faster), count(Change::slower),
                 100.0 * static_cast<double>(alarms) / static_cast<double>(t.comparisons),
                 100.0 * static_cast<double>(t.caught.at(threshold)) / static_cast<double>(t.comparisons));
    }
  }
  return 0;
}
