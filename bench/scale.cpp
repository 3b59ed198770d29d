// One job of many ranks, oversubscribed: mpirun -np RANKS --oversubscribe kernelsweep run over POINTS
// no-op points (protocol warm-up 0 / rep 0 / no flush, --check none), and where its wall time goes:
//   start-up   mpirun's start until the first point is measured (the earliest started_at of the
//              results file's rows), split at the moment rank 0 made the results file (its
//              started_at: MPI started, the sweep read, the plan made) and, when the run calibrates,
//              at the first "calibrated" figure of the ranks;
//   measuring  the first point's start until the last point's end (ended_at of the rows);
//   shutdown   the last point's end until mpirun has exited.
// Then the points lost (planned, no row) and stored twice, and the peak RSS of rank 0 and of the
// median rank (GNU time around each rank: the rank or its worker, the larger).
//   bench_scale [RANKS [POINTS [RUN OPTION...]]]     (default: 64 20000)
// e.g. bench_scale 64 20000 --calibrate off. KERNELSWEEP_BENCH_CLI=PATH measures another build of
// kernelsweep (its test build, or one that knows the noop kernel) instead of this test build.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/harness.h"
#include "store/results_file.h"

namespace {

namespace fs = std::filesystem;
using SystemClock = std::chrono::system_clock;

std::string cli() {
  const char* other = std::getenv("KERNELSWEEP_BENCH_CLI");
  return other && *other ? other : KS_TEST_CLI;
}

// "2026-12-07T12:00:00.123Z" (the results file's times, UTC with milliseconds) as a time point.
SystemClock::time_point parse_utc(const std::string& text) {
  std::tm parts{};
  int milliseconds = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &parts.tm_year, &parts.tm_mon, &parts.tm_mday, &parts.tm_hour,
                  &parts.tm_min, &parts.tm_sec, &milliseconds) != 7)
    throw std::runtime_error("not a UTC time with milliseconds: " + text);
  parts.tm_year -= 1900;
  parts.tm_mon -= 1;
  return SystemClock::from_time_t(::timegm(&parts)) + std::chrono::milliseconds(milliseconds);
}

double seconds_between(SystemClock::time_point from, SystemClock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Peak RSS in MB of each rank that GNU time wrote (rss.RANK, KiB), by rank.
std::vector<double> peak_mb_of_ranks(const fs::path& dir, int ranks) {
  std::vector<double> peaks;
  for (int rank = 0; rank < ranks; ++rank) {
    std::ifstream in(dir / fmt::format("rss.{}", rank));
    double kib = 0;
    in >> kib;
    peaks.push_back(kib * 1024 / 1e6);
  }
  return peaks;
}

struct Stored {
  std::size_t rows = 0, points = 0, passed = 0;
  SystemClock::time_point first_start = SystemClock::time_point::max(), last_end = SystemClock::time_point::min();
  SystemClock::time_point file_made;
  std::size_t ranks_measuring = 0;
};

Stored read_results(const fs::path& results) {
  const ks::ResultsFile file = ks::ResultsFile::open_read_only(results);
  Stored s;
  s.file_made = parse_utc(file.read_info().started_at);
  std::map<std::string, int> rows_of_point;
  std::map<int, int> rows_of_rank;
  for (const ks::StoredRun& run : file.read_runs()) {
    ++s.rows;
    ++rows_of_point[run.point_id];
    ++rows_of_rank[run.rank];
    s.passed += run.status == "passed";
    s.first_start = std::min(s.first_start, parse_utc(run.started_at));
    s.last_end = std::max(s.last_end, parse_utc(run.ended_at));
  }
  s.points = rows_of_point.size();
  s.ranks_measuring = rows_of_rank.size();
  return s;
}

void bench(int ranks, std::uint64_t points, const std::string& run_options) {
  const fs::path dir = ks::bench::scratch(fmt::format("scale-{}-{}", ranks, points));
  const fs::path sweep = dir / "sweep.yaml";
  ks::bench::write_text(sweep, fmt::format("name: scale\n{}kernels:\n  - kernel: noop\n    grid:\n      id: {{from: 1, "
                                           "to: {}, step: 1}}\n",
                                           ks::bench::kBareProtocol, points));
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  const std::string command = fmt::format(
      "{} -np {} --oversubscribe sh -c '/usr/bin/time -f %M -o {}/rss.$OMPI_COMM_WORLD_RANK {} run {} --output-dir {} "
      "--check none {} \"$@\"' sh > {}/job.log 2>&1",
      KS_MPIEXEC, ranks, dir.string(), cli(), sweep.string(), dir.string(), run_options, dir.string());
  const auto started = SystemClock::now();
  const ks::testing::CommandResult result = ks::testing::run_shell(command);
  const auto ended = SystemClock::now();
  if (result.exit_code != 0)
    throw std::runtime_error(
        fmt::format("the job failed ({}): {}\n{}", result.exit_code, command, ks::testing::read_text(dir / "job.log")));

  const Stored s = read_results(dir / "scale.h5");
  std::vector<double> peaks = peak_mb_of_ranks(dir, ranks);
  const double rank0 = peaks.front();
  std::nth_element(peaks.begin(), peaks.begin() + peaks.size() / 2, peaks.end());
  std::printf("%d ranks, %llu points, run options '%s'\n", ranks, static_cast<unsigned long long>(points),
              run_options.c_str());
  std::printf("  total wall     %7.1f s\n", seconds_between(started, ended));
  std::printf("  start-up       %7.1f s  (results file made at %.1f s, first point at %.1f s)\n",
              seconds_between(started, s.first_start), seconds_between(started, s.file_made),
              seconds_between(started, s.first_start));
  std::printf("  measuring      %7.1f s  (%.0f points/s; %zu ranks measured)\n",
              seconds_between(s.first_start, s.last_end),
              s.rows / std::max(1e-9, seconds_between(s.first_start, s.last_end)), s.ranks_measuring);
  std::printf("  shutdown       %7.1f s\n", seconds_between(s.last_end, ended));
  std::printf("  points lost    %7llu   stored twice %llu   not passed %zu\n",
              static_cast<unsigned long long>(points - std::min<std::uint64_t>(points, s.points)),
              static_cast<unsigned long long>(s.rows - s.points), s.rows - s.passed);
  std::printf("  peak RSS       rank 0 %.0f MB, median rank %.0f MB\n", rank0, peaks[peaks.size() / 2]);
  std::fflush(stdout);
  fs::remove_all(dir);
}

}  // namespace

// A whole number of at least 1 (a count of ranks or points), or 0 when `text` is none.
std::uint64_t count_of(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoull(text);
}

int main(int argc, char** argv) {
  const std::uint64_t ranks = argc > 1 ? count_of(argv[1]) : 64;
  const std::uint64_t points = argc > 2 ? count_of(argv[2]) : 20000;
  std::string run_options;
  for (int i = 3; i < argc; ++i) run_options += std::string(i > 3 ? " " : "") + argv[i];
  if (ranks < 1 || ranks > 100000 || points < 1 || points > 1000000) {
    std::fprintf(stderr,
                 "usage: bench_scale [RANKS [POINTS [RUN OPTION...]]]: RANKS from 1 to 100000, POINTS from 1 to "
                 "1000000 (a range of the no-op kernel holds at most a million values)\n");
    return 2;
  }
  bench(static_cast<int>(ranks), points, run_options);
  return 0;
}
