#pragma once
// Rank 0's storing thread: runs the tasks it is given (records to store, batches to write) one after
// another, in the order given, on a thread of its own, so that storing a batch (its journal, its rows,
// its documents: tens of milliseconds) never holds up the loop that answers the ranks' requests and
// takes in their records. What waits is bounded (kMaxWaitingBytes): past it give() waits, so the
// serving loop asks full() first and, while the store is behind, leaves the ranks' results with MPI
// and goes on answering their requests (run/outputs.h): memory stays bounded, and granting points
// never waits on storing.
//
// A task that throws (a full disk) stops the thread's work: the tasks after it are dropped, and the
// exception comes out of the caller's next check() or drain(), as it came out of the store before.
// Synchronous (KERNELSWEEP_STORE_ON_SERVING_THREAD=1) runs each task on the caller's thread when
// given: the store as it was, which the tests compare the thread with.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace ks {

class StoringThread {
 public:
  static constexpr std::size_t kMaxWaitingBytes = std::size_t{128} << 20;

  // Synchronous where KERNELSWEEP_STORE_ON_SERVING_THREAD is set to 1.
  static bool synchronous_by_default();

  explicit StoringThread(bool synchronous = synchronous_by_default());
  // Runs what was given and not yet run (failures swallowed: whoever needed them has checked), then
  // ends the thread.
  ~StoringThread();
  StoringThread(const StoringThread&) = delete;
  StoringThread& operator=(const StoringThread&) = delete;

  // Gives a task of about `bytes` of memory; waits while more than kMaxWaitingBytes wait to be run.
  void give(std::function<void()> task, std::size_t bytes = 0);
  // Whether more than kMaxWaitingBytes wait to be run: a give() now would wait.
  bool full() const { return waiting_bytes_.load(std::memory_order_relaxed) > kMaxWaitingBytes; }
  // Rethrows the failure of a task, if one failed.
  void check();
  // Waits until every task given has run, then rethrows a failure, if one came.
  void drain();
  // Waits until every task given has run (or the work stopped at a failure).
  void wait();

 private:
  void run();
  void run_task(std::function<void()>& task);

  const bool synchronous_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::pair<std::function<void()>, std::size_t>> waiting_;
  std::atomic<std::size_t> waiting_bytes_ = 0;  // changed under mutex_; read without it by full()
  bool running_task_ = false;
  bool ending_ = false;
  std::exception_ptr failure_;
  std::thread thread_;  // last: started once the members above are made
};

}  // namespace ks
