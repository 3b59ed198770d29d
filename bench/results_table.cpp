// Prints a results file's /runs as a table: the figures the notes in bench/results/ quote.
//   bench_results_table RESULTS.h5 [FILTER]   (FILTER: a substring of "kernel/implementation/mode params")
#include <cstdio>
#include <string>

#include "store/results_file.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_results_table RESULTS.h5 [FILTER]\n");
    return 2;
  }
  const std::string filter = argc > 2 ? argv[2] : "";
  const auto file = ks::ResultsFile::open_read_only(argv[1]);
  std::printf("%-8s %-4s %-38s %12s %12s %12s %9s %8s %10s  %s\n", "status", "rank", "gpu", "median ms", "p20 ms",
              "p80 ms", "TFLOP/s", "n_rep", "peak MB", "point");
  for (const auto& r : file.read_runs()) {
    const std::string label = r.kernel + "/" + r.implementation + "/" + r.mode + " " + r.params_json;
    if (label.find(filter) == std::string::npos) continue;
    std::printf("%-8s %-4d %-38s %12.4f %12.4f %12.4f %9.1f %8lld %10.1f  %s\n", r.status.c_str(), r.rank,
                r.gpu_uuid.c_str(), r.stats.median_ns / 1e6, r.stats.p20_ns / 1e6, r.stats.p80_ns / 1e6, r.tflops,
                static_cast<long long>(r.n_repeat), r.device_peak_bytes / 1e6, label.c_str());
  }
  return 0;
}
