// How long `kernelsweep history` takes over a year of nightly results files, and how much memory
// it holds: F synthetic files of N gemm points each (bench/synthetic_results.h: 100 samples a point,
// a run-to-run noise of up to ±3% a median, a few points failed or skipped), one a night, labelled
// night=K and started a day apart, with known steps planted:
//   every 50th point (0, 50, 100...)   20% slower from night 0.82 F on (a regression still there)
//   points 25, 75, 125...             15% faster from night 0.55 F on
//   point 11                           one night (F / 4) 50% slower, then back (an outlier, no step)
// Then `kernelsweep history FOLDER --format json` runs R times as a child process (the files as
// their writer left them, marked sound), once over a copy of the folder (every file read by the
// damage check first, as files fetched from elsewhere are), and over the first fifth of the files
// and the first file alone: peak memory should follow the series held (8 bytes a point a night) and
// one file's medians, not the files' contents. The steps found are counted against those planted.
// Then `kernelsweep report FOLDER -o DIR --history` (the steps table and a timeline drawn by gnuplot
// for each point with a step) runs R times, and once with --timelines all (its first 200 points
// drawn), timed and measured alike.
//
//   bench_history_speed [--points N] [--files F] [--repeat R] [--dir FOLDER] [--keep]
//     goal at N = 1,000 and F = 365: at most 30 s
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "measured_command.h"
#include "synthetic_results.h"

#ifndef KS_CLI
#error "bench_history_speed runs the kernelsweep binary: configure with the tests on (KERNELSWEEP_TESTS=ON)"
#endif

namespace {

namespace fs = std::filesystem;

struct Options {
  std::size_t points = 1000, files = 365;
  int repeat = 3;
  fs::path dir = fs::temp_directory_path() / "kernelsweep-bench_history_speed";
  bool keep = false;
};

bool parse(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--points" && i + 1 < argc) options.points = std::stoul(argv[++i]);
    else if (arg == "--files" && i + 1 < argc) options.files = std::stoul(argv[++i]);
    else if (arg == "--repeat" && i + 1 < argc) options.repeat = std::stoi(argv[++i]);
    else if (arg == "--dir" && i + 1 < argc) options.dir = argv[++i];
    else if (arg == "--keep") options.keep = true;
    else return false;
  }
  return true;
}

// Night k's start: 2026-01-01 plus k days, at 02:00 UTC.
std::string night_start(std::size_t night) {
  using namespace std::chrono;
  const year_month_day day{sys_days{year{2026} / January / 1} + days{night}};
  return fmt::format("{:04}-{:02}-{:02}T02:00:00.000Z", static_cast<int>(day.year()),
                     static_cast<unsigned>(day.month()), static_cast<unsigned>(day.day()));
}

// Night k's seed, scrambled (splitmix64): the synthetic file's generator draws from one linear
// congruential sequence, and consecutive seeds would give nights whose noise drifts together.
std::uint64_t night_seed(std::uint64_t night) {
  std::uint64_t z = night + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct Planted {
  std::size_t slower_from, faster_from, outlier_night;
};

double scale_of(const Planted& planted, std::size_t night, std::size_t point) {
  if (point % 50 == 0 && night >= planted.slower_from) return 1.2;
  if (point % 50 == 25 && night >= planted.faster_from) return 0.85;
  if (point == 11 && night == planted.outlier_night) return 1.5;
  return 1.0;
}

// The index of a gemm point of bench/synthetic_results.h, from its place in the grid.
std::size_t point_index(const nlohmann::json& params) {
  const auto step = [&](const char* name) {
    return static_cast<std::size_t>(std::log2(params.at(name).get<double>() / 64));
  };
  return step("M") + 8 * step("N") + 64 * step("K") + 512 * (params.at("dtype") == "fp32") +
         1024 * params.at("seed").get<std::size_t>();
}

// The steps found in the JSON output, against those planted in the points that were timed.
void count_steps(const std::string& json_path, const Planted& planted) {
  std::ifstream in(json_path);
  const nlohmann::json out = nlohmann::json::parse(in);
  std::size_t timed = 0, slower = 0, slower_found = 0, faster = 0, faster_found = 0, elsewhere = 0, pending = 0;
  for (const auto& series : out.at("series")) {
    if (series.at("runs_seen") == 0) continue;  // failed or skipped every night
    ++timed;
    const std::size_t point = point_index(series.at("parameters"));
    const auto& steps = series.at("steps");
    const auto found = [&](std::size_t night, double low, double high) {
      return steps.size() == 1 && steps[0].at("run") == night && steps[0].at("change_pct") > low &&
             steps[0].at("change_pct") < high;
    };
    pending += !series.at("pending").is_null();
    if (scale_of(planted, planted.slower_from, point) > 1) {
      ++slower;
      slower_found += found(planted.slower_from, 15, 25);
    } else if (scale_of(planted, planted.faster_from, point) < 1) {
      ++faster;
      faster_found += found(planted.faster_from, -20, -10);
    } else {
      elsewhere += !steps.empty();
    }
  }
  std::printf(
      "%zu series timed: %zu of %zu planted slowdowns (20%%) found at night %zu, %zu of %zu speed-ups (15%%) "
      "at night %zu; %zu series with a step where none was planted (point 11 has one outlier night); "
      "%zu pending\n",
      timed, slower_found, slower, planted.slower_from, faster_found, faster, planted.faster_from, elsewhere, pending);
}

ks::bench::Measured run_history(const std::vector<std::string>& inputs, const std::string& out_path) {
  std::vector<std::string> args{KS_CLI, "history"};
  args.insert(args.end(), inputs.begin(), inputs.end());
  args.insert(args.end(), {"--format", "json"});
  const ks::bench::Measured m = ks::bench::measure_command(args, out_path);
  if (m.exit_code != 0) {
    std::fprintf(stderr, "history failed (exit %d)\n", m.exit_code);
    std::exit(1);
  }
  return m;
}

// `report FOLDER -o DIR --history [extra]`, timed; the line it prints is passed on.
void time_history_report(const fs::path& nights, const fs::path& out, const std::vector<std::string>& extra,
                         const char* what, int repeat) {
  std::vector<std::string> args{KS_CLI, "report", nights.string(), "-o", out.string(), "--history"};
  args.insert(args.end(), extra.begin(), extra.end());
  const std::string printed = (out.parent_path() / "report-stdout.txt").string();
  for (int r = 0; r < repeat; ++r) {
    const ks::bench::Measured m = ks::bench::measure_command(args, printed);
    if (m.exit_code != 0) {
      std::fprintf(stderr, "report --history failed (exit %d)\n", m.exit_code);
      std::exit(1);
    }
    std::ifstream in(printed);
    std::string line;
    std::getline(in, line);
    std::printf("report --history%s, run %d: %.2f s, peak resident %.0f MB; %s\n", what, r + 1, m.seconds, m.peak_mb,
                line.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, options)) {
    std::fprintf(stderr, "usage: %s [--points N] [--files F] [--repeat R] [--dir FOLDER] [--keep]\n", argv[0]);
    return 2;
  }
  const fs::path nights = options.dir / "nights";
  fs::remove_all(nights);
  fs::create_directories(nights);
  const Planted planted{options.files * 82 / 100, options.files * 55 / 100, options.files / 4};
  const auto written = std::chrono::steady_clock::now();
  std::vector<std::string> files;
  std::uintmax_t bytes = 0;
  for (std::size_t night = 0; night < options.files; ++night) {
    const fs::path file = nights / fmt::format("night-{:03}.h5", night);
    ks::bench::write_synthetic_results(file, options.points,
                                       {.seed = night_seed(night),
                                        .labels = {{"night", std::to_string(night)}},
                                        .started_at = night_start(night),
                                        .scale = [&](std::size_t point) { return scale_of(planted, night, point); }});
    files.push_back(file.string());
    bytes += fs::file_size(file);
  }
  std::printf("%zu files of %zu points written in %.1f s (%.0f MB in all)\n", options.files, options.points,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - written).count(),
              static_cast<double>(bytes) / 1e6);

  const std::string json = (options.dir / "history.json").string();
  for (int r = 0; r < options.repeat; ++r) {
    const ks::bench::Measured m = run_history({nights.string()}, json);
    std::printf("history over %zu files, run %d: %.2f s, peak resident %.0f MB\n", options.files, r + 1, m.seconds,
                m.peak_mb);
  }
  count_steps(json, planted);
  time_history_report(nights, options.dir / "report", {}, "", options.repeat);
  time_history_report(nights, options.dir / "report-all", {"--timelines", "all"}, " --timelines all", 1);
  // A copy has no mark of a file found sound (a new inode): every file is read by the damage check
  // first, as files fetched from another machine are.
  const fs::path copied = options.dir / "copied";
  fs::remove_all(copied);
  fs::copy(nights, copied);
  const ks::bench::Measured cold = run_history({copied.string()}, json);
  std::printf("history over a copy of the %zu files (each checked first): %.2f s, peak resident %.0f MB\n",
              options.files, cold.seconds, cold.peak_mb);
  fs::remove_all(copied);
  for (std::size_t count : {files.size() / 5, std::size_t{1}}) {
    const std::vector<std::string> first(files.begin(), files.begin() + static_cast<std::ptrdiff_t>(count));
    const ks::bench::Measured part = run_history(first, (options.dir / "part.json").string());
    std::printf("history over the first %zu file%s: %.2f s, peak resident %.0f MB\n", count, count == 1 ? "" : "s",
                part.seconds, part.peak_mb);
  }
  if (!options.keep) fs::remove_all(options.dir);
  return 0;
}
