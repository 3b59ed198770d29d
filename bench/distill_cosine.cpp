// bench_distill_cosine: times distill_cosine's fused CUDA implementation (several chunk sizes and
// row kernels), the naive one, and the floor (the four matrix products alone, unchunked, cuBLASLt)
// with the do_bench protocol, at hidden 4096, vocab 128256, bf16, for each token count; prints one
// line per variant and a summary table last. Results are recorded in bench/results/.
//
//   bench_distill_cosine [--tokens 1024,2048,4096,8192] [--chunks 512,1024,2048]
//                        [--row-kernels two-pass,cluster] [--modes full,forward] [--no-naive]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/distill_cosine/cuda_distill.h"
#include "measure/do_bench.h"

namespace {

using ks::distill::Params;

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

std::vector<std::int64_t> split_integers(const std::string& list) {
  std::vector<std::int64_t> values;
  for (const auto& item : split(list)) values.push_back(std::stoll(item));
  return values;
}

struct Options {
  std::vector<std::int64_t> tokens{1024, 2048, 4096, 8192};
  std::vector<std::int64_t> chunks{512, 1024, 2048};
  std::vector<std::string> row_kernels{"two-pass", "cluster"};
  std::vector<std::string> modes{"full"};
  bool naive = true;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + ": expects a value");
      return argv[++i];
    };
    if (arg == "--tokens") o.tokens = split_integers(value());
    else if (arg == "--chunks") o.chunks = split_integers(value());
    else if (arg == "--row-kernels") o.row_kernels = split(value());
    else if (arg == "--modes") o.modes = split(value());
    else if (arg == "--no-naive") o.naive = false;
    else throw std::invalid_argument("unknown argument " + arg);
  }
  return o;
}

struct Figures {
  double median_ms = 0, p20_ms = 0, p80_ms = 0;
  double peak_gb = 0;
  double tflops = 0;
};

Figures time_point(ks::Instance& instance, const std::string& mode, const ks::Protocol& protocol) {
  instance.prepare(mode);
  const ks::Timing timing = ks::do_bench(instance, mode, protocol);
  std::vector<double> sorted = timing.samples_ns;
  std::sort(sorted.begin(), sorted.end());
  Figures f;
  f.median_ms = ks::quantile_linear(sorted, 0.5) * 1e-6;
  f.p20_ms = ks::quantile_linear(sorted, 0.2) * 1e-6;
  f.p80_ms = ks::quantile_linear(sorted, 0.8) * 1e-6;
  f.peak_gb = static_cast<double>(instance.device_peak_bytes()) * 1e-9;
  f.tflops = instance.flops(mode) / (f.median_ms * 1e-3) * 1e-12;
  return f;
}

// The goals for the full pass: median (ms) and peak memory (GB) per token count.
double goal_ms(std::int64_t tokens) {
  static const std::map<std::int64_t, double> goals{{1024, 4.4}, {2048, 8.5}, {4096, 16.8}, {8192, 34.0}};
  const auto it = goals.find(tokens);
  return it == goals.end() ? 0 : it->second;
}

}  // namespace

int main(int argc, char** argv) {
#ifndef KERNELSWEEP_HAVE_CUDA
  (void)argc, (void)argv;
  std::fprintf(stderr, "bench_distill_cosine: kernelsweep was built without CUDA\n");
  return 1;
#else
  try {
    const Options options = parse(argc, argv);
    const ks::Protocol protocol = ks::resolve_protocol(ks::ProtocolSpec{}, ks::Backend::cuda);
    struct Best {
      std::string variant;
      Figures fused, floor;
    };
    std::map<std::int64_t, Best> best;
    fmt::print("{:>6} {:>16} {:>16} {:>9} {:>9} {:>9} {:>8} {:>8}\n", "tokens", "variant", "mode", "median_ms",
               "p20_ms", "p80_ms", "TFLOP/s", "peak_GB");
    auto line = [](std::int64_t tokens, const std::string& variant, const std::string& mode, const Figures& f) {
      fmt::print("{:>6} {:>16} {:>16} {:>9.3f} {:>9.3f} {:>9.3f} {:>8.1f} {:>8.3f}\n", tokens, variant, mode,
                 f.median_ms, f.p20_ms, f.p80_ms, f.tflops, f.peak_gb);
      std::fflush(stdout);
    };
    for (std::int64_t tokens : options.tokens) {
      Params p;
      p.tokens = tokens;
      Best& b = best[tokens];
      {
        auto floor = ks::distill::make_gemm_floor_instance(p);
        b.floor = time_point(*floor, "full", protocol);
        line(tokens, "gemm-floor", "4 products", b.floor);
      }
      for (std::int64_t chunk : options.chunks) {
        if (chunk > tokens) continue;
        for (const std::string& row_kernel : options.row_kernels) {
          p.chunk_size = chunk;
          ks::distill::FusedOptions fused_options;
          fused_options.row_kernel = ks::distill::row_kernel_from_string(row_kernel);
          std::unique_ptr<ks::Instance> fused;
          try {
            fused = ks::distill::make_fused_instance(p, fused_options);
          } catch (const std::exception& e) {
            fmt::print("{:>6} skipped fused chunk {} {}: {}\n", tokens, chunk, row_kernel, e.what());
            continue;
          }
          const std::string variant = fmt::format("c{}-{}", chunk, row_kernel);
          for (const std::string& mode : options.modes) {
            const Figures f = time_point(*fused, mode, protocol);
            line(tokens, variant, mode, f);
            if (mode == "full" && (b.variant.empty() || f.median_ms < b.fused.median_ms)) {
              b.variant = variant;
              b.fused = f;
            }
          }
        }
      }
      if (options.naive) {
        p.chunk_size = 1024;
        auto naive = ks::distill::make_naive_instance(p);
        line(tokens, "naive", "full", time_point(*naive, "full", protocol));
      }
    }
    fmt::print("\nsummary: full pass, bf16, hidden 4096, vocab 128256, do_bench (flush 256 MiB, warmup 25 ms, rep 100 ms)\n");
    fmt::print("{:>6} {:>16} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8} {:>8} {:>7}\n", "tokens", "best variant",
               "median_ms", "p20_ms", "p80_ms", "floor_ms", "ratio", "TFLOP/s", "peak_GB", "goal_ms");
    for (const auto& [tokens, b] : best)
      fmt::print("{:>6} {:>16} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>7.3f} {:>8.1f} {:>8.3f} {:>7.1f}\n", tokens,
                 b.variant, b.fused.median_ms, b.fused.p20_ms, b.fused.p80_ms, b.floor.median_ms,
                 b.fused.median_ms / b.floor.median_ms, b.fused.tflops, b.fused.peak_gb, goal_ms(tokens));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_distill_cosine: %s\n", e.what());
    return 1;
  }
#endif
}
