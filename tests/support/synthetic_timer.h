#pragma once
// A timer on a synthetic clock (the clock of tests/python/synthetic_do_bench.py, in C++): each call
// moves it by the next of `durations`, each flush by flush_ns, and each sample's SM clock reads the
// next of `sm_clocks_mhz` (NaN when none are given): how the protocols' loops are tested to the bit,
// with throttling injected.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "measure/timer.h"

namespace ks::testing {

class SyntheticTimer final : public BenchTimer {
 public:
  SyntheticTimer(std::vector<std::int64_t> durations, std::int64_t flush_ns, std::vector<double> sm_clocks_mhz = {},
                 double peak_sm_clock_mhz = std::numeric_limits<double>::quiet_NaN())
      : durations_(std::move(durations)),
        flush_ns_(flush_ns),
        clocks_(std::move(sm_clocks_mhz)),
        peak_(peak_sm_clock_mhz) {}

  void run() { now_ += durations_[calls_++ % durations_.size()]; }
  void reserve_marks(std::size_t count) override {
    if (marks_.size() < count) marks_.resize(count);
  }
  void record(std::size_t mark) override { marks_[mark] = now_; }
  void flush() override { now_ += flush_ns_; }
  void synchronize() override {}
  double elapsed_ns(std::size_t from, std::size_t to) const override {
    return static_cast<double>(marks_[to] - marks_[from]);
  }

  void hold() override { ++holds_; }
  void release() override { ++releases_; }
  void reserve_clocks(std::size_t count) override {
    if (slots_.size() < count) slots_.resize(count, std::numeric_limits<double>::quiet_NaN());
  }
  // Each clock stopped reads the next injected value.
  void stop_clock(std::size_t clock) override {
    slots_.at(clock) =
        clocks_.empty() ? std::numeric_limits<double>::quiet_NaN() : clocks_[clock_reads_ % clocks_.size()];
    ++clock_reads_;
  }
  std::vector<double> sm_clocks_mhz(std::size_t count) const override {
    return std::vector<double>(slots_.begin(), slots_.begin() + static_cast<std::ptrdiff_t>(count));
  }
  double default_sm_clock_mhz() const override { return peak_; }

  void capture(const std::function<void()>& calls) override {
    ++captures_;
    captured_ = calls;
  }
  void replay() override { captured_(); }

  std::size_t calls() const { return calls_; }
  int holds() const { return holds_; }
  int releases() const { return releases_; }
  int captures() const { return captures_; }

 private:
  std::vector<std::int64_t> durations_;
  std::int64_t flush_ns_;
  std::vector<double> clocks_;
  std::vector<double> slots_;
  double peak_;
  std::int64_t now_ = 0;
  std::size_t calls_ = 0;
  std::size_t clock_reads_ = 0;
  int holds_ = 0, releases_ = 0, captures_ = 0;
  std::vector<std::int64_t> marks_;
  std::function<void()> captured_;
};

}  // namespace ks::testing
