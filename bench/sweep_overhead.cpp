// kernelsweep's own cost per point: sweeps of the no-op kernel (20,000 points by default) on 2 and 4
// ranks, in both document formats. Per point = (wall of N points − wall of 1 point) / N, so process
// start-up, MPI start-up and worker start-up are left out; what remains is scheduling, the worker
// round trip, streaming to rank 0, HDF5 appends and document writing.
//   bench_sweep_overhead [POINTS]
#include <cstdio>

#include "bench/harness.h"

namespace {

std::string noop_sweep(int points) {
  return fmt::format(
      "name: overhead\n{}kernels:\n  - kernel: noop\n    grid:\n      id: {{from: 1, to: {}, step: 1}}\n",
      ks::bench::kBareProtocol, points);
}

double seconds_for(int ranks, int points, const std::string& format) {
  const auto dir = ks::bench::scratch(fmt::format("overhead-{}-{}-{}", ranks, points, format));
  ks::bench::write_text(dir / "sweep.yaml", noop_sweep(points));
  return ks::bench::run_sweep(ranks, fmt::format("run {} --output-dir {} --kernelindex-format {} --check none",
                                                 (dir / "sweep.yaml").string(), dir.string(), format))
      .seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const int points = argc > 1 ? std::atoi(argv[1]) : 20000;
  std::printf("sweep overhead: no-op kernel, %d points, protocol warmup 0 / rep 0 / no flush\n", points);
  std::printf("%-6s %-6s %12s %12s %16s %14s\n", "ranks", "docs", "wall (s)", "1 point (s)", "per point (ms)",
              "points/s");
  for (int ranks : {2, 4}) {
    for (const std::string format : {"jsonl", "json"}) {
      const double one = seconds_for(ranks, 1, format);
      const double all = seconds_for(ranks, points, format);
      const double per_point_ms = (all - one) / points * 1e3;
      std::printf("%-6d %-6s %12.2f %12.2f %16.3f %14.0f\n", ranks, format.c_str(), all, one, per_point_ms,
                  points / (all - one));
    }
  }
  return 0;
}
