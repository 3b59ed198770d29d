#pragma once
// The CPU time the calling thread has used, for stage-by-stage accounts of where a thread's time goes
// (rank 0's storing of records: run/outputs.h). A thread's clock counts only its own work, not the
// time it waited or other threads ran.
#include <ctime>

namespace ks {

inline double thread_cpu_seconds() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// Adds the thread's CPU time between its making and its end to `total`.
class ThreadCpuSpan {
 public:
  explicit ThreadCpuSpan(double& total) : total_(total), start_(thread_cpu_seconds()) {}
  ~ThreadCpuSpan() { total_ += thread_cpu_seconds() - start_; }
  ThreadCpuSpan(const ThreadCpuSpan&) = delete;
  ThreadCpuSpan& operator=(const ThreadCpuSpan&) = delete;

 private:
  double& total_;
  double start_;
};

}  // namespace ks
