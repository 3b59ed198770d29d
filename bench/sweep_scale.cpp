// kernelsweep at scale: sweeps of the no-op kernel of 100,000 points and more on 2 ranks, jsonl
// documents. For each size: validate and plan --json (wall, peak RSS), the run (wall, peak RSS of
// rank 0 and rank 1, results file and documents on disk), then, once the files are written out
// (sync), status and a --resume with nothing left to do (wall, peak RSS). Sizes given with a trailing "p" (10000000p)
// are planned only: validate and plan, no run. Above a million points the sweep is another (sweep_text).
//   bench_sweep_scale [POINTS[p] ...]     (default: 100000 1000000)
// KERNELSWEEP_BENCH_CLI=PATH measures another build of kernelsweep instead of the test build.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/ranges.h>

#include "bench/harness.h"

namespace {

namespace fs = std::filesystem;

struct Measured {
  double seconds = 0;
  double peak_mb = 0;  // of the command and the children it waited for
};

// Runs `command` under /bin/sh (exec'ed, so the shell is not counted) and measures it.
Measured measure(const std::string& command) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  Measured m;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.peak_mb = usage.ru_maxrss / 1024.0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(fmt::format("failed ({}): {}", WIFEXITED(status) ? WEXITSTATUS(status) : -1, command));
  return m;
}

std::size_t files_under(const fs::path& path) {
  std::size_t files = 0;
  if (fs::exists(path))
    for (const auto& entry : fs::recursive_directory_iterator(path)) files += entry.is_regular_file();
  return files;
}

std::uintmax_t bytes_under(const fs::path& path) {
  if (fs::is_regular_file(path)) return fs::file_size(path);
  std::uintmax_t total = 0;
  if (fs::exists(path))
    for (const auto& entry : fs::recursive_directory_iterator(path))
      if (entry.is_regular_file()) total += entry.file_size();
  return total;
}

double peak_mb_in(const fs::path& file) {
  std::ifstream in(file);
  double kb = 0;
  in >> kb;
  return kb / 1024.0;
}

// The no-op kernel's one axis, up to the million values a range may hold. Beyond, a run sweeps the
// test build's test_sleep kernel (as cheap: it sleeps setup_ms, here under a picosecond) over a
// million ids times POINTS / 1,000,000 values of setup_ms, its documents compressed with zstd (3 GB
// where plain jsonl would take 33 GB at ten million points); a plan alone is a 1000 x (POINTS /
// 1000) grid of GEMM shapes (validate and plan never run a kernel).
std::string sweep_text(std::uint64_t points, bool plan_only) {
  const bool large = points > 1'000'000;
  std::string text =
      fmt::format("name: scale\n{}output:\n  kernelindex_format: jsonl\n{}kernels:\n", ks::bench::kBareProtocol,
                  large && !plan_only ? "  kernelindex_compression: zstd\n" : "");
  if (!large)
    return text + fmt::format("  - kernel: noop\n    grid:\n      id: {{from: 1, to: {}, step: 1}}\n", points);
  if (!plan_only) {
    std::vector<std::string> setup_ms;
    for (std::uint64_t k = 0; k < points / 1'000'000; ++k) setup_ms.push_back(fmt::format("{}e-9", k));
    return text + fmt::format(
                      "  - kernel: test_sleep\n    implementations: [cpu]\n    modes: [forward]\n    grid:\n"
                      "      setup_ms: [{}]\n      id: {{from: 1, to: 1000000, step: 1}}\n",
                      fmt::join(setup_ms, ", "));
  }
  return text + fmt::format(
                    "  - kernel: gemm\n    implementations: [cpu]\n    modes: [forward]\n    grid:\n"
                    "      M: {{from: 1, to: 1000, step: 1}}\n      N: {{from: 1, to: {}, step: 1}}\n",
                    points / 1000);
}

// The kernelsweep measured: the test build's, or KERNELSWEEP_BENCH_CLI (another build, for before
// and after figures).

std::string cli() {
  const char* other = std::getenv("KERNELSWEEP_BENCH_CLI");
  return other && *other ? other : KS_TEST_CLI;
}

void bench(std::uint64_t points, bool plan_only) {
  const fs::path dir = ks::bench::scratch(fmt::format("scale-{}", points));
  const fs::path sweep = dir / "sweep.yaml";
  ks::bench::write_text(sweep, sweep_text(points, plan_only));
  // Above the default limit only: builds before validate had the option are measured too.
  const std::string limit = points > 1'000'000 ? fmt::format("--max-points {}", points) : "";
  const Measured validate = measure(fmt::format("{} validate {} {} > /dev/null", cli(), sweep.string(), limit));
  const Measured plan = measure(fmt::format("{} plan --json {} {} > /dev/null", cli(), sweep.string(), limit));
  std::printf("%-10llu validate %7.2f s %7.0f MB   plan --json %7.2f s %7.0f MB\n",
              static_cast<unsigned long long>(points), validate.seconds, validate.peak_mb, plan.seconds, plan.peak_mb);
  std::fflush(stdout);
  if (plan_only) return;

  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  // Each rank's peak RSS, by rank: GNU time around each rank writes it to rss.RANK.
  const std::string run = fmt::format(
      "{} -np 2 --oversubscribe sh -c '/usr/bin/time -f %M -o {}/rss.$OMPI_COMM_WORLD_RANK {} run {} --output-dir {} "
      "--check none {} \"$@\"' sh",
      KS_MPIEXEC, dir.string(), cli(), sweep.string(), dir.string(), limit);
  const Measured measured = measure(run + " > /dev/null 2>&1");
  const double rank0 = peak_mb_in(dir / "rss.0"), rank1 = peak_mb_in(dir / "rss.1");
  // Status and the resume meet the files as a later job does: written out. Measured while the run's
  // gigabytes were still being written back, they took a second longer.
  ::sync();
  const Measured status = measure(fmt::format("{} status {}/scale.h5 > /dev/null", cli(), dir.string()));
  const Measured resume = measure(run + " --resume > /dev/null 2>&1");
  std::printf(
      "%-10llu run %7.1f s (%.0f points/s)  rank 0 %6.0f MB  rank 1 %6.0f MB  results %6.0f MB  documents "
      "%6.0f MB in %zu files  status %6.2f s %6.0f MB  resume %6.2f s, rank 0 %6.0f MB\n",
      static_cast<unsigned long long>(points), measured.seconds, points / measured.seconds, rank0, rank1,
      bytes_under(dir / "scale.h5") / 1e6, bytes_under(dir / "kernelindex") / 1e6, files_under(dir / "kernelindex"),
      status.seconds, status.peak_mb, resume.seconds, peak_mb_in(dir / "rss.0"));
  std::fflush(stdout);
  fs::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> sizes(argv + 1, argv + argc);
  if (sizes.empty()) sizes = {"100000", "1000000"};
  std::printf("sweep scale: no-op kernel, 2 ranks, jsonl documents, protocol warmup 0 / rep 0 / no flush\n");
  for (const std::string& size : sizes) {
    const bool plan_only = !size.empty() && size.back() == 'p';
    bench(std::stoull(plan_only ? size.substr(0, size.size() - 1) : size), plan_only);
  }
  return 0;
}
