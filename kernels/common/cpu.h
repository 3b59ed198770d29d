#pragma once
// What CPU implementations share: splitting work over the cores this process may use.
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "kernels/common/cores.h"

namespace ks {

// Runs body(begin, end) over [0, count) cut into contiguous ranges, one per usable core (cores.h;
// fewer when a range would hold less than min_per_thread items); the calling thread takes part.
template <class Body> void parallel_for(std::int64_t count, Body&& body, std::int64_t min_per_thread = 1) {
  const std::int64_t cores = usable_cores();
  const std::int64_t threads = std::clamp<std::int64_t>(count / std::max<std::int64_t>(min_per_thread, 1), 1, cores);
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(threads - 1));
  for (std::int64_t t = 1; t < threads; ++t) workers.emplace_back(body, count * t / threads, count * (t + 1) / threads);
  body(std::int64_t{0}, count / threads);
  for (auto& worker : workers) worker.join();
}

}  // namespace ks
