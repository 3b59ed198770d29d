#pragma once
// A results file of N runs written through the store, for the benchmarks of the offline commands
// (show, report, compare): gemm points over an M×N×K grid, three implementations, bf16 and fp32,
// 100 samples each, a few points failed or skipped, the way a large sweep's file looks.
//   write_synthetic_results(path, runs, seed): `seed` moves every median by a few percent, so that
//   two files of one seed are two runs of one build, and files of another seed another build.
//   write_synthetic_results(path, runs, SyntheticRun{...}): the same with labels, a start time and
//   some points made slower (a night of a history).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/canonical_json.h"
#include "common/digest.h"
#include "measure/do_bench.h"
#include "record/run_record.h"
#include "store/results_file.h"

namespace ks::bench {

// The command line of a benchmark timed on a synthetic file:
//   NAME [--runs N] [--repeat R] [--dir FOLDER] [--keep]
struct SyntheticOptions {
  std::size_t runs = 100'000;
  int repeat = 3;
  std::filesystem::path dir;
  bool keep = false;  // leave the file in FOLDER afterwards
};

// Empty (after printing the usage) when the command line is not one.
inline std::optional<SyntheticOptions> parse_synthetic_options(int argc, char** argv, const std::string& name) {
  SyntheticOptions options;
  options.dir = std::filesystem::temp_directory_path() / ("kernelsweep-" + name);
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) options.runs = std::stoul(argv[++i]);
    else if (arg == "--repeat" && i + 1 < argc) options.repeat = std::stoi(argv[++i]);
    else if (arg == "--dir" && i + 1 < argc) options.dir = argv[++i];
    else if (arg == "--keep") options.keep = true;
    else {
      std::fprintf(stderr, "usage: %s [--runs N] [--repeat R] [--dir FOLDER] [--keep]\n", name.c_str());
      return std::nullopt;
    }
  }
  return options;
}

// One file of a series of them, as the same sweep run night after night: its seed (the run-to-run
// noise of every median), its labels and start, and a factor on each point's times (by its index:
// a build that made some points slower); none is 1.
struct SyntheticRun {
  std::uint64_t seed = 1;
  RunLabels labels;
  std::string started_at = "2026-12-01T00:00:00.000Z";
  std::function<double(std::size_t point)> scale;
};

inline void write_synthetic_results(const std::filesystem::path& path, std::size_t runs, const SyntheticRun& run) {
  std::filesystem::remove(path);
  RunInfo info;
  info.sweep_name = "synthetic";
  info.sweep_path = "synthetic.yaml";
  info.sweep_text = "name: synthetic\n";
  info.plan_size = static_cast<std::int64_t>(runs);
  info.kernelsweep_version = "bench";
  info.started_at = run.started_at;
  info.host = "bench";
  info.labels = run.labels;
  const std::uint64_t seed = run.seed;
  ResultsFile file = ResultsFile::create(path, info);
  file.put_environment("sha256:environment", R"({"spec":{}})");
  file.put_protocol("sha256:protocol", R"({"spec":{}})");
  const char* implementations[] = {"cpu", "cublaslt", "cublas"};
  const char* dtypes[] = {"bf16", "fp32"};
  std::uint64_t state = 0x9E3779B97F4A7C15ull * (seed + 1);
  const auto noise = [&] {  // uniform in [-1, 1)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) / 4503599627370496.0 - 1.0;
  };
  std::vector<StoredRun> batch;
  for (std::size_t i = 0; i < runs; ++i) {
    const std::int64_t m = 64 << (i % 8), n = 64 << ((i / 8) % 8), k = 64 << ((i / 64) % 8);
    const Json params = {
        {"M", m}, {"N", n}, {"K", k}, {"dtype", dtypes[(i / 512) % 2]}, {"seed", static_cast<std::int64_t>(i / 1024)}};
    RunRecord r;
    r.kernel = "gemm";
    r.implementation = implementations[(i / 3) % 3];
    r.mode = "forward";
    r.params_json = canonical_json(params);
    r.point_id = sha256_hex(r.kernel + r.implementation + r.params_json);
    r.host = "node" + std::to_string(i % 16);
    r.rank = static_cast<std::int32_t>(i % 16);
    r.started_at = r.ended_at = "2026-12-01T00:00:00.000Z";
    r.status = i % 97 == 5 ? "failed" : i % 89 == 7 ? "skipped" : "passed";
    if (r.status != "skipped") {
      const double base = 2.0 * m * n * k / 5e4;  // ns, as a GPU at 50 TFLOP/s
      const double run_level = (1.0 + 0.03 * noise()) * (run.scale ? run.scale(i) : 1.0);
      for (int s = 0; s < 100; ++s) r.samples_ns.push_back(base * run_level * (1.0 + 0.02 * noise()));
      r.stats = summarize(r.samples_ns);
      r.n_warmup = 10;
      r.n_repeat = 100;
      r.flops = 2.0 * m * n * k;
      r.bytes = 2.0 * (m * k + k * n + m * n);
      r.tflops = r.flops / r.stats.median_ns / 1e3;
      r.gbps = r.bytes / r.stats.median_ns;
      r.device_peak_bytes = static_cast<std::uint64_t>(r.bytes) + (32u << 20);
    }
    if (r.status == "failed") r.message = "gemm: worst error 0.5 above the tolerance";
    if (r.status == "skipped") r.message = "no GPU visible to this worker";
    batch.emplace_back(std::move(r), Citations{"sha256:protocol", "sha256:environment",
                                               "sha256:workload" + std::to_string(i), "sha256:implementation"});
    if (batch.size() == 1024) {
      file.append(batch);
      batch.clear();
    }
  }
  if (!batch.empty()) file.append(batch);
  file.finish(run.started_at);
}

inline void write_synthetic_results(const std::filesystem::path& path, std::size_t runs, std::uint64_t seed = 1) {
  SyntheticRun run;
  run.seed = seed;
  write_synthetic_results(path, runs, run);
}

}  // namespace ks::bench
