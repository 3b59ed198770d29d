// The threads of CPU implementations follow the cores a process may use. Each case runs in a child
// process, which narrows its affinity before its first call: usable_cores() keeps what it read first.
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/parallel.h"
#include "kernels/common/cores.h"
#include "kernels/common/cpu.h"

namespace ks {
namespace {

// The cores this test process may use.
std::vector<int> allowed_cores() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  EXPECT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  std::vector<int> cores;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) cores.push_back(cpu);
  return cores;
}

// Runs `child` in a forked process bound to `cores`; its return value (0-255) comes back.
int in_child_bound_to(const std::vector<int>& cores, const std::function<int()>& child) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : cores) CPU_SET(cpu, &set);
    if (::sched_setaffinity(0, sizeof set, &set) != 0) ::_exit(255);
    ::_exit(child());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The distinct threads parallel_for ran its ranges on, and how many ranges it made.
int ranges_of_parallel_for() {
  std::atomic<int> ranges{0};
  std::int64_t covered = 0;
  std::mutex mutex;
  parallel_for(1000, [&](std::int64_t begin, std::int64_t end) {
    ++ranges;
    const std::lock_guard<std::mutex> lock(mutex);
    covered += end - begin;
  });
  return covered == 1000 ? ranges.load() : 0;
}

TEST(UsableCores, CountsTheCoresOfTheAffinityMaskNotTheMachine) {
  const std::vector<int> cores = allowed_cores();
  ASSERT_FALSE(cores.empty());
  EXPECT_EQ(in_child_bound_to({cores[0]}, [] { return usable_cores(); }), 1);
  const int all = std::min<int>(static_cast<int>(cores.size()), 254);  // an exit code holds up to 254 here
  EXPECT_EQ(in_child_bound_to(cores, [] { return std::min(usable_cores(), 254); }), all);
}

TEST(UsableCores, ACpuImplementationOnOneCoreRunsItsWorkAsOneRange) {
  const std::vector<int> cores = allowed_cores();
  ASSERT_FALSE(cores.empty());
  EXPECT_EQ(in_child_bound_to({cores[0]}, ranges_of_parallel_for), 1);
}

TEST(UsableCores, ACpuImplementationOnTwoCoresRunsItsWorkAsTwoRanges) {
  const std::vector<int> cores = allowed_cores();
  if (cores.size() < 2) GTEST_SKIP() << "this machine lets the test use one core";
  EXPECT_EQ(in_child_bound_to({cores[0], cores[1]}, ranges_of_parallel_for), 2);
}

TEST(UsableCores, TheOfflineCommandsWorkOnOneThreadOnOneCore) {
  const std::vector<int> cores = allowed_cores();
  ASSERT_FALSE(cores.empty());
  const int threads = in_child_bound_to({cores[0]}, [] {
    std::set<std::thread::id> seen;
    std::mutex mutex;
    in_parallel(64, [&](std::size_t) {
      const std::lock_guard<std::mutex> lock(mutex);
      seen.insert(std::this_thread::get_id());
    });
    return static_cast<int>(seen.size());
  });
  EXPECT_EQ(threads, 1);
}

}  // namespace
}  // namespace ks
