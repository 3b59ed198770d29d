#include <chrono>
#include <cstring>
#include <functional>
#include <vector>

#include "measure/timer.h"

namespace ks {
namespace {

// The flush buffer lives as long as the process: allocated at the first flush, grown when a larger
// flush is asked for, reused by every point after that.
std::vector<unsigned char>& flush_buffer(std::size_t bytes) {
  static std::vector<unsigned char> buffer;
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer;
}

class SteadyClockTimer final : public BenchTimer {
 public:
  explicit SteadyClockTimer(std::int64_t flush_bytes) : flush_bytes_(flush_bytes > 0 ? flush_bytes : 0) {}

  void reserve_marks(std::size_t count) override {
    if (marks_.size() < count) marks_.resize(count);
  }

  void record(std::size_t mark) override { marks_.at(mark) = std::chrono::steady_clock::now(); }

  void flush() override {
    if (flush_bytes_ == 0) return;
    unsigned char* data = flush_buffer(flush_bytes_).data();
    std::memset(data, 0, flush_bytes_);
    // The buffer is never read, so the compiler could drop the memset; this empty statement that
    // "may read any memory" keeps it.
    asm volatile("" : : "r"(data) : "memory");
  }

  void synchronize() override {}  // the CPU calls are done when run() returns

  double elapsed_ns(std::size_t from, std::size_t to) const override {
    return std::chrono::duration<double, std::nano>(marks_.at(to) - marks_.at(from)).count();
  }

  // The CPU runs what it is given when it is given it: a replay is the calls again, back to back.
  void capture(const std::function<void()>& calls) override { captured_ = calls; }
  void replay() override { captured_(); }

 private:
  std::function<void()> captured_;
  std::size_t flush_bytes_;
  std::vector<std::chrono::steady_clock::time_point> marks_;
};

}  // namespace

std::unique_ptr<BenchTimer> make_steady_clock_timer(std::int64_t flush_bytes) {
  return std::make_unique<SteadyClockTimer>(flush_bytes);
}

}  // namespace ks
