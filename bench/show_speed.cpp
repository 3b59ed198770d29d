// How long `kernelsweep show` takes on a large results file: a synthetic file of N gemm runs
// (bench/synthetic_results.h: 100 samples each, a few failed or skipped) is written once, then
// `kernelsweep show FILE --format F > /dev/null` is timed, as a user runs it, in each format.
//
//   bench_show_speed [--runs N] [--repeat R] [--dir FOLDER] [--keep]
//     prints, per format, the wall time of each of R runs and their median (goal: under 2 s at N = 100,000)
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "synthetic_results.h"

#ifndef KS_CLI
#error "bench_show_speed runs the kernelsweep binary: configure with the tests on (KERNELSWEEP_TESTS=ON)"
#endif

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The wall time of one `kernelsweep show`, its output thrown away; exits on failure.
double time_show(const std::filesystem::path& file, const std::string& format) {
  const std::string command = fmt::format("{} show {} --format {} > /dev/null", KS_CLI, file.string(), format);
  const auto start = Clock::now();
  const int status = std::system(command.c_str());
  const double seconds = seconds_since(start);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "failed: %s\n", command.c_str());
    std::exit(1);
  }
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const auto options = ks::bench::parse_synthetic_options(argc, argv, "bench_show_speed");
  if (!options) return 2;
  const auto& [runs, repeat, dir, keep] = *options;
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "synthetic.h5";
  const auto written = Clock::now();
  ks::bench::write_synthetic_results(file, runs);
  std::printf("%zu runs written in %.2f s (%.1f MB)\n", runs, seconds_since(written),
              static_cast<double>(std::filesystem::file_size(file)) / 1e6);
  for (const std::string format : {"table", "md", "csv", "json"}) {
    std::vector<double> times;
    for (int r = 0; r < repeat; ++r) times.push_back(time_show(file, format));
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    std::string each;
    for (double t : times) each += fmt::format(" {:.3f}", t);
    std::printf("show --format %-5s median %.3f s  (runs:%s)\n", format.c_str(), sorted[sorted.size() / 2],
                each.c_str());
  }
  if (!keep) std::filesystem::remove(file);
  return 0;
}
