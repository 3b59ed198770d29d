#include "run/storing_thread.h"

#include <cstdlib>
#include <cstring>

namespace ks {

bool StoringThread::synchronous_by_default() {
  const char* value = std::getenv("KERNELSWEEP_STORE_ON_SERVING_THREAD");
  return value && std::strcmp(value, "1") == 0;
}

StoringThread::StoringThread(bool synchronous) : synchronous_(synchronous) {
  if (!synchronous_) thread_ = std::thread([this] { run(); });
}

StoringThread::~StoringThread() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    ending_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void StoringThread::give(std::function<void()> task, std::size_t bytes) {
  if (synchronous_) {
    task();
    return;
  }
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return waiting_bytes_ <= kMaxWaitingBytes || failure_; });
    if (failure_) return;  // the work stopped: the caller hears why at its next check
    waiting_.emplace_back(std::move(task), bytes);
    waiting_bytes_ += bytes;
  }
  changed_.notify_all();
}

void StoringThread::check() {
  std::lock_guard lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
}

void StoringThread::wait() {
  if (synchronous_) return;
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return (waiting_.empty() && !running_task_) || failure_; });
}

void StoringThread::drain() {
  wait();
  check();
}

void StoringThread::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return !waiting_.empty() || ending_; });
    if (waiting_.empty()) return;  // ending, with nothing left to run
    auto [task, bytes] = std::move(waiting_.front());
    waiting_.pop_front();
    waiting_bytes_ -= bytes;
    running_task_ = true;
    lock.unlock();
    changed_.notify_all();
    run_task(task);
    lock.lock();
    running_task_ = false;
    changed_.notify_all();
  }
}

// A failure stops the work: what follows a batch that could not be stored must not be stored after
// it (the journal and the rows keep their order).
void StoringThread::run_task(std::function<void()>& task) {
  try {
    task();
  } catch (...) {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = std::current_exception();
    waiting_.clear();
    waiting_bytes_ = 0;
  }
}

}  // namespace ks
