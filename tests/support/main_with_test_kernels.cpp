// kernelsweep with the test kernels registered: what the MPI and CLI tests run.
//
// KS_TEST_WORKER_START=die|stall, with KS_TEST_WORKER_START_COUNT=FILE and KS_TEST_WORKER_START_TIMES=N,
// makes the first N worker starts (counted across all processes in FILE) die or hang before their
// hello: what the worker start-up tests need.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "cli/cli.h"
#include "kernels/kernel.h"
#include "support/test_kernels.h"

namespace {

// This start's number, from 1: one byte appended to the counter file per start (O_APPEND is atomic).
long count_this_start(const char* counter) {
  const int fd = ::open(counter, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return 0;
  (void)::write(fd, "x", 1);
  const long starts = ::lseek(fd, 0, SEEK_END);
  ::close(fd);
  return starts;
}

void fail_this_worker_start_if_told(int argc, char** argv) {
  const char* how = std::getenv("KS_TEST_WORKER_START");
  const char* counter = std::getenv("KS_TEST_WORKER_START_COUNT");
  const char* times = std::getenv("KS_TEST_WORKER_START_TIMES");
  if (argc < 2 || std::strcmp(argv[1], "worker") != 0 || !how || !counter || !times) return;
  if (count_this_start(counter) > std::atol(times)) return;
  if (std::strcmp(how, "die") == 0) std::abort();
  if (std::strcmp(how, "stall") == 0)
    for (;;) ::pause();
}

}  // namespace

int main(int argc, char** argv) {
  fail_this_worker_start_if_told(argc, argv);
  ks::Registry registry;
  ks::register_builtin_kernels(registry);
  ks::testing::register_test_kernels(registry);
  return ks::cli::main(argc, argv, registry);
}
