// The Python worker's cost per point beside the C++ worker's: sweeps of the no-op kernel's `cpu`
// (C++ worker) and `python` (Python worker, bench/python/noop_python.py) implementations, 2 ranks, jsonl documents,
// nothing timed but one call. Per point = (wall of N points − wall of 1 point) / N, so process, MPI and worker start-up
// (torch's import included) are left out.
//   bench_python_worker_overhead [POINTS]      (KERNELSWEEP_PYTHON picks the interpreter)
#include <cstdio>

#include "bench/harness.h"

namespace {

// noop `python` comes from bench/python/noop_python.py.
double seconds_for(const std::string& implementation, int points) {
  const auto dir = ks::bench::scratch(fmt::format("python-overhead-{}-{}", implementation, points));
  ks::bench::write_text(dir / "sweep.yaml",
                        fmt::format("name: overhead\npython: {{modules: [noop_python], path: [{}/bench/python]}}\n{}"
                                    "kernels:\n  - kernel: noop\n    implementations: [{}]\n"
                                    "    grid:\n      id: {{from: 1, to: {}, step: 1}}\n",
                                    KS_SOURCE_DIR, ks::bench::kBareProtocol, implementation, points));
  return ks::bench::run_sweep(2, fmt::format("run {} --output-dir {} --kernelindex-format jsonl --check none",
                                             (dir / "sweep.yaml").string(), dir.string()))
      .seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const int points = argc > 1 ? std::atoi(argv[1]) : 5000;
  std::printf("worker overhead: no-op kernel, %d points, 2 ranks, protocol warmup 0 / rep 0 / no flush\n", points);
  std::printf("%-8s %12s %12s %16s %14s\n", "worker", "wall (s)", "1 point (s)", "per point (ms)", "points/s");
  for (const std::string implementation : {"cpu", "python"}) {
    const double one = seconds_for(implementation, 1);
    const double all = seconds_for(implementation, points);
    std::printf("%-8s %12.2f %12.2f %16.3f %14.0f\n", implementation == "cpu" ? "C++" : "Python", all, one,
                (all - one) / points * 1e3, points / (all - one));
  }
  return 0;
}
