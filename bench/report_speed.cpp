// How long `kernelsweep report` takes on a large results file, and how much memory it holds: a
// synthetic file of N gemm runs (bench/synthetic_results.h: 3 implementations, an M×N×K×dtype grid
// repeated over seeds, a few failed or skipped) is written once, then `kernelsweep report FILE -o DIR`
// runs R times as a child process; each run's wall time and peak resident memory (wait4's rusage:
// the report and the gnuplot it starts) are printed, with the sizes of what it wrote.
//
//   bench_report_speed [--runs N] [--repeat R] [--dir FOLDER] [--keep]
//     goals at N = 100,000: under 10 s and under 2 GB
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "measured_command.h"
#include "synthetic_results.h"

#ifndef KS_CLI
#error "bench_report_speed runs the kernelsweep binary: configure with the tests on (KERNELSWEEP_TESTS=ON)"
#endif

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Runs `kernelsweep report FILE -o DIR`, its stdout thrown away; exits on failure.
ks::bench::Measured time_report(const fs::path& file, const fs::path& out) {
  const ks::bench::Measured m = ks::bench::measure_command({KS_CLI, "report", file.string(), "-o", out.string()});
  if (m.exit_code != 0) {
    std::fprintf(stderr, "failed (exit %d): %s report %s -o %s\n", m.exit_code, KS_CLI, file.c_str(), out.c_str());
    std::exit(1);
  }
  return m;
}

double megabytes(const fs::path& path) { return static_cast<double>(fs::file_size(path)) / 1e6; }

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const auto options = ks::bench::parse_synthetic_options(argc, argv, "bench_report_speed");
  if (!options) return 2;
  const auto& [runs, repeat, dir, keep] = *options;
  fs::create_directories(dir);
  const fs::path file = dir / "synthetic.h5", out = dir / "report";
  const auto written = Clock::now();
  ks::bench::write_synthetic_results(file, runs);
  std::printf("%zu runs written in %.2f s (%.1f MB)\n", runs, seconds_since(written), megabytes(file));

  std::vector<double> seconds, peaks;
  for (int r = 0; r < repeat; ++r) {
    const ks::bench::Measured m = time_report(file, out);
    seconds.push_back(m.seconds);
    peaks.push_back(m.peak_mb);
    std::printf("report run %d: %.2f s, peak resident %.0f MB\n", r + 1, m.seconds, m.peak_mb);
  }
  std::size_t svgs = 0;
  double svg_mb = 0;
  for (const auto& entry : fs::directory_iterator(out / "plots"))
    if (entry.path().extension() == ".svg") {
      ++svgs;
      svg_mb += megabytes(entry.path());
    }
  std::printf("median %.2f s (goal: under 10 s), peak resident at most %.0f MB (goal: under 2000 MB)\n",
              median(seconds), *std::max_element(peaks.begin(), peaks.end()));
  std::printf("wrote index.html %.1f MB, report.md %.1f MB, %zu SVG plots %.2f MB in all\n",
              megabytes(out / "index.html"), megabytes(out / "report.md"), svgs, svg_mb);
  if (!keep) {
    fs::remove(file);
    fs::remove_all(out);
  }
  return 0;
}
