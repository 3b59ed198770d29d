// What /proc says of a process: its stat fields, whatever its command name holds, and nothing at all
// (no exception) once it is gone.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "common/processes.h"

namespace {

// A child that names itself `name` (as its /proc/PID/comm) and waits to be killed.
pid_t start_named_child(const char* name) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_NAME, name);
    for (;;) ::pause();
  }
  return pid;
}

// Waits until the child has renamed itself (it runs on its own after fork).
bool wait_for_name(pid_t pid, const std::string& name) {
  for (int attempt = 0; attempt < 500; ++attempt) {
    if (ks::read_process_file(pid, "comm").value_or("") == name + "\n") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(Processes, StatReadsStateParentAndStartTimeWhateverTheCommandNameHolds) {
  const pid_t child = start_named_child("a) b (c) 9 9");
  ASSERT_GT(child, 0);
  ASSERT_TRUE(wait_for_name(child, "a) b (c) 9 9"));
  // Renamed, it may still be on its way into pause(): wait until it sleeps there.
  auto stat = ks::process_stat(child);
  for (int attempt = 0; attempt < 500 && stat && stat->state != 'S'; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stat = ks::process_stat(child);
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->parent, ::getpid());
  EXPECT_EQ(stat->state, 'S');  // sleeping in pause(), read past the name's parentheses
  EXPECT_FALSE(stat->start_ticks.empty());
  EXPECT_EQ(stat->start_ticks.find_first_not_of("0123456789"), std::string::npos) << stat->start_ticks;
  // The child started after this process: its start time is not earlier.
  const auto self = ks::process_stat(::getpid());
  ASSERT_TRUE(self.has_value());
  EXPECT_LE(std::stoull(self->start_ticks), std::stoull(stat->start_ticks));
}

TEST(Processes, AKilledChildIsAZombieUntilReapedThenGone) {
  const pid_t child = start_named_child("zombie-to-be");
  ASSERT_GT(child, 0);
  ::kill(child, SIGKILL);
  // Killed but not reaped: still listed, as a zombie.
  char state = '?';
  for (int attempt = 0; attempt < 500 && state != 'Z'; ++attempt) {
    if (const auto stat = ks::process_stat(child)) state = stat->state;
    if (state != 'Z') std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(state, 'Z');
  ::waitpid(child, nullptr, 0);
  EXPECT_FALSE(ks::process_stat(child).has_value());
  EXPECT_FALSE(ks::read_process_file(child, "cmdline").has_value());
  const auto pids = ks::process_ids();
  EXPECT_EQ(std::count(pids.begin(), pids.end(), child), 0);
}

TEST(Processes, ListsThisProcessAndReadsItsCommandLine) {
  const auto pids = ks::process_ids();
  EXPECT_EQ(std::count(pids.begin(), pids.end(), ::getpid()), 1);
  const auto command = ks::read_process_file(::getpid(), "cmdline");
  ASSERT_TRUE(command.has_value());
  const std::string program = std::filesystem::read_symlink("/proc/self/exe").filename().string();
  EXPECT_NE(command->find(program), std::string::npos) << *command;
}

// Reading the files of processes that end and are reaped all the while, as a test watching a job
// does, never throws: a /proc/PID file read while its process is reaped fails mid-read, which
// std::ifstream turns into an exception out of the read itself.
TEST(Processes, FilesOfProcessesReapedMeanwhileReadAsGone) {
  // Ten batches: with std::ifstream, about one batch in two saw a read throw on a 2-core machine.
  constexpr int kBatches = 10, kChildren = 50;
  for (int batch = 0; batch < kBatches; ++batch) {
    std::vector<pid_t> children;
    for (int i = 0; i < kChildren; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        ::usleep(static_cast<useconds_t>(200 * i));
        ::_exit(0);
      }
      children.push_back(pid);
    }
    std::thread reaper([&] {
      for (int reaped = 0; reaped < kChildren;)
        if (::waitpid(-1, nullptr, 0) > 0) ++reaped;
    });
    int seen = 0;
    for (int round = 0; round < 200; ++round)
      for (pid_t pid : children) {
        EXPECT_NO_THROW({
          if (ks::process_stat(pid)) ++seen;
          (void)ks::read_process_file(pid, "cmdline");
        });
      }
    reaper.join();
    EXPECT_GT(seen, 0);
    for (pid_t pid : children) EXPECT_FALSE(ks::process_stat(pid).has_value()) << pid;
  }
}

}  // namespace
