#pragma once
// How many threads a CPU implementation spreads its work over: the cores this process may run on.
// A rank runs on the cores its launcher gave it (mpirun binds a rank to one core when it starts two
// ranks or fewer; Slurm binds tasks to their --cpus-per-task), and its workers inherit them.
// std::thread::hardware_concurrency counts every core of the machine instead: a worker bound to one
// core of a 64-core node would start 64 threads on it at every timed call, and time their switching.
#include <sched.h>

#include <algorithm>
#include <thread>

namespace ks {

// The cores in this thread's affinity mask now, at least 1 (the machine's count where the mask
// cannot be read).
inline int count_usable_cores() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) == 0) return std::max(1, CPU_COUNT(&allowed));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

// count_usable_cores() as read at this process's first call: a kernel's timed calls must not pay for
// a system call each.
inline int usable_cores() {
  static const int cores = count_usable_cores();
  return cores;
}

}  // namespace ks
