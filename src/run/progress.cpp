#include "run/progress.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "calibration/speed_of_light.h"
#include "common/clock.h"

namespace ks {
namespace {

constexpr auto kLiveInterval = std::chrono::milliseconds(250);

std::string format_ns(double ns) {
  if (ns <= 0) return "-";
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.2f} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.3f} ms", ns / 1e6);
  return fmt::format("{:.3f} s", ns / 1e9);
}

}  // namespace

Progress::Progress(std::size_t total, double log_interval_s, std::FILE* out)
    : total_(total),
      out_(out),
      live_(::isatty(::fileno(out)) == 1),
      interval_(live_ ? std::chrono::duration_cast<std::chrono::steady_clock::duration>(kLiveInterval)
                      : std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(log_interval_s))),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

void Progress::add(const RunRecord& r) {
  ++done_;
  for (const char* flag : kCountedFlags)
    if (has_flag(r.flags, flag)) ++flagged_[flag];
  KernelTally& k = kernels_[r.kernel];
  ++k.points;
  if (r.status == "passed") {
    ++k.passed;
    const double m = r.stats.median_ns;
    k.best_median_ns = k.best_median_ns == 0 ? m : std::min(k.best_median_ns, m);
    k.worst_median_ns = std::max(k.worst_median_ns, m);
    if (r.sol_pct >= 0 && !has_flag(r.flags, "implausible")) k.best_sol_pct = std::max(k.best_sol_pct, r.sol_pct);
  } else if (r.status == "skipped") {
    ++k.skipped;
    ++skipped_;
  } else {
    ++k.failed;
    ++failures_;
  }
}

std::string Progress::line() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? done_ / elapsed : 0;
  const double eta = rate > 0 ? (total_ - done_) / rate : -1;
  const double percent = total_ ? 100.0 * done_ / total_ : 100.0;
  return fmt::format("[{}/{}] {:5.1f}%  failed {}  skipped {}  {:.2f} points/s  elapsed {}  ETA {}", done_, total_,
                     percent, failures_, skipped_, rate, human_duration(elapsed),
                     done_ == total_ ? "0s" : human_duration(eta));
}

void Progress::print_line(bool final_line) {
  if (live_) fmt::print(out_, "\r\033[K{}{}", line(), final_line ? "\n" : "");
  else fmt::print(out_, "progress {}\n", line());
  std::fflush(out_);
  last_print_ = std::chrono::steady_clock::now();
}

void Progress::note(const std::string& text) {
  fmt::print(out_, "{}{}\n", live_ ? "\r\033[K" : "", text);
  std::fflush(out_);
}

void Progress::tick() {
  if (std::chrono::steady_clock::now() - last_print_ >= interval_) print_line(false);
}

void Progress::finish() {
  print_line(true);
  fmt::print(out_, "\n{:<22} {:>7} {:>7} {:>7} {:>8} {:>14} {:>14} {:>9}\n", "kernel", "points", "passed", "failed",
             "skipped", "best median", "worst median", "best sol%");
  for (const auto& [name, k] : kernels_)
    fmt::print(out_, "{:<22} {:>7} {:>7} {:>7} {:>8} {:>14} {:>14} {:>9}\n", name, k.points, k.passed, k.failed,
               k.skipped, format_ns(k.best_median_ns), format_ns(k.worst_median_ns),
               k.best_sol_pct < 0 ? "-" : fmt::format("{:.1f}", k.best_sol_pct));
  if (!flagged_.empty()) {
    // A flagged figure must not pass unnoticed: implausible first (beyond the device: kept, shown, and
    // left out of every ratio), then the others (docs/speed-of-light.md).
    std::string counts;
    for (const char* flag : kCountedFlags)
      if (const auto it = flagged_.find(flag); it != flagged_.end())
        counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", it->second, flag);
    fmt::print(out_,
               "flagged: {} (kernelsweep show RESULTS --columns kernel,implementation,mode,sol_pct,flags; "
               "docs/speed-of-light.md)\n",
               counts);
  }
  std::fflush(out_);
}

}  // namespace ks
