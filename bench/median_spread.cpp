// The same points measured in several results files (one sweep run with 1, 2, ... ranks): for each
// point passed in every file, the spread of its median across the files, (max − min) / min.
// Shows whether ranks running side by side disturb each other's timings.
//   bench_median_spread A.h5 B.h5 [C.h5 ...] [--min-ms 1]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "store/results_file.h"

int main(int argc, char** argv) {
  std::vector<std::string> files;
  double min_ms = 1.0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--min-ms") == 0 && i + 1 < argc) min_ms = std::atof(argv[++i]);
    else files.emplace_back(argv[i]);
  }
  if (files.size() < 2) {
    std::fprintf(stderr, "usage: bench_median_spread A.h5 B.h5 [...] [--min-ms 1]\n");
    return 2;
  }
  struct Row {
    std::string label;
    std::vector<double> medians;
  };
  std::map<std::string, Row> rows;
  for (std::size_t f = 0; f < files.size(); ++f) {
    for (const auto& r : ks::ResultsFile::open_read_only(files[f]).read_runs()) {
      if (r.status != "passed") continue;
      Row& row = rows[r.point_id];
      row.label = r.kernel + "/" + r.implementation + "/" + r.mode + " " + r.params_json;
      row.medians.resize(files.size(), 0);
      row.medians[f] = r.stats.median_ns;
    }
  }
  std::size_t compared = 0, over_3_percent = 0;
  double worst = 0;
  std::string worst_label;
  std::vector<std::pair<double, std::string>> spreads;
  for (const auto& [id, row] : rows) {
    if (std::count(row.medians.begin(), row.medians.end(), 0.0) > 0) continue;
    const auto [lo, hi] = std::minmax_element(row.medians.begin(), row.medians.end());
    if (*lo < min_ms * 1e6) continue;
    const double spread = (*hi - *lo) / *lo;
    ++compared;
    if (spread > 0.03) ++over_3_percent;
    spreads.emplace_back(spread, row.label);
    if (spread > worst) worst = spread, worst_label = row.label;
  }
  std::sort(spreads.begin(), spreads.end());
  auto percentile = [&](double q) {
    return spreads.empty() ? 0 : spreads[static_cast<std::size_t>(q * (spreads.size() - 1))].first;
  };
  std::printf("median spread across %zu files, points with every median >= %.3g ms\n", files.size(), min_ms);
  std::printf("points compared %zu, spread > 3%%: %zu\n", compared, over_3_percent);
  std::printf("spread p50 %.2f%%  p90 %.2f%%  max %.2f%%\n", 100 * percentile(0.5), 100 * percentile(0.9), 100 * worst);
  if (!worst_label.empty()) std::printf("worst: %s\n", worst_label.c_str());
  for (std::size_t i = spreads.size() > 5 ? spreads.size() - 5 : 0; i < spreads.size(); ++i)
    std::printf("  %.2f%%  %s\n", 100 * spreads[i].first, spreads[i].second.c_str());
  return 0;
}
