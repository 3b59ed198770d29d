#pragma once
// Work on independent items spread over the cores this process may use, for the offline commands
// (show, report, compare), whose reading of HDF5 is single-threaded but whose per-point work is not.
#include <algorithm>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "kernels/common/cores.h"

namespace ks {

// Calls work(i) for every i in [0, count), on up to 16 threads (no more than the usable cores);
// returns when all are done. The first exception a call throws is rethrown here (the other threads
// finish their items first).
inline void in_parallel(std::size_t count, const std::function<void(std::size_t)>& work) {
  const std::size_t threads = std::clamp<std::size_t>(static_cast<std::size_t>(usable_cores()), 1, 16);
  std::exception_ptr first_error;
  std::mutex error_mutex;
  const auto stride = [&](std::size_t start) {
    try {
      for (std::size_t i = start; i < count; i += threads) work(i);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!first_error) first_error = std::current_exception();
    }
  };
  std::vector<std::thread> started;
  for (std::size_t t = 1; t < std::min(threads, count); ++t) started.emplace_back(stride, t);
  stride(0);
  for (std::thread& thread : started) thread.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace ks
