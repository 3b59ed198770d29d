// The rank's handling of a worker process at its end (cluster/worker_process.h), with workers that
// are plain shell scripts speaking the pipe protocol (docs/worker-protocol.md).
#include <string>

#include <gtest/gtest.h>

#include "cluster/worker_process.h"
#include "common/processes.h"
#include "support/cli_runner.h"

namespace ks {
namespace {

namespace fs = std::filesystem;

// A worker that writes its pid to `pid_file`, says hello (a 16-byte message after its 4-byte
// little-endian length) and then reads nothing: it never sees the stop it is sent.
std::vector<std::string> deaf_worker(const fs::path& pid_file) {
  const std::string script =
      "echo $$ > '" + pid_file.string() + "'; printf '\\020\\000\\000\\000{\"type\":\"hello\"}' >&4; exec sleep 600";
  return {"/bin/sh", "-c", script};
}

TEST(WorkerProcess, AWorkerThatDoesNotEndOnItsStopIsKilled) {
  const fs::path pid_file = testing::fresh_directory("deaf_worker") / "pid";
  WorkerProcess worker(deaf_worker(pid_file), {"PATH=/usr/bin:/bin"});
  ASSERT_EQ(worker.ensure_started().value("type", ""), "hello");
  const pid_t pid = std::stoi(testing::read_text(pid_file));
  ASSERT_GT(pid, 0);
  worker.stop();
  EXPECT_FALSE(worker.running());
  EXPECT_FALSE(process_stat(pid)) << "the worker " << pid << " outlived its stop";
}

}  // namespace
}  // namespace ks
