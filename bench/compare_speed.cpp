// `kernelsweep compare` on two synthetic results files of 100,000 runs each (bench/synthetic_results.h,
// seeds 1 and 2: two builds whose medians differ by a few percent), timed as a user runs it: the
// whole command, reading both files, judging every point and printing, in each output format.
//   bench_compare_speed [RUNS=100000] [REPEATS=3]
// Figures: bench/results/compare-cpu2.md.
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/harness.h"
#include "bench/synthetic_results.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs the command; its wall time in seconds (throws when it fails to run at all).
double timed_command(const std::string& command) {
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(command.c_str());
  const double seconds = seconds_since(start);
  if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) throw std::runtime_error("failed: " + command);
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t runs = argc > 1 ? std::stoul(argv[1]) : 100000;
  const int repeats = argc > 2 ? std::stoi(argv[2]) : 3;
  const auto dir = ks::bench::scratch("compare_speed");
  const auto base = dir / "base.h5", next = dir / "new.h5";

  auto start = std::chrono::steady_clock::now();
  ks::bench::write_synthetic_results(base, runs, 1);
  ks::bench::write_synthetic_results(next, runs, 2);
  fmt::print("wrote 2 files of {} runs in {:.1f} s ({:.0f} MB each)\n", runs, seconds_since(start),
             static_cast<double>(std::filesystem::file_size(base)) / 1e6);

  fmt::print("| format | median s | min s | max s |\n| --- | ---: | ---: | ---: |\n");
  for (const char* format : {"table", "md", "json"}) {
    std::vector<double> times;
    const auto out = dir / (std::string("out.") + format);
    for (int r = 0; r < repeats; ++r)
      times.push_back(timed_command(fmt::format("{} compare {} {} --format {} > {}", KS_CLI, base.string(),
                                                next.string(), format, out.string())));
    std::sort(times.begin(), times.end());
    fmt::print("| {} | {:.2f} | {:.2f} | {:.2f} |\n", format, times[times.size() / 2], times.front(), times.back());
  }
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  fmt::print("peak resident memory of one compare: {:.0f} MB\n", static_cast<double>(usage.ru_maxrss) / 1024);

  std::ifstream json_out(dir / "out.json");
  const auto summary = nlohmann::json::parse(json_out).at("summary");
  fmt::print("labels: {}\n", summary.dump());
  return 0;
}
