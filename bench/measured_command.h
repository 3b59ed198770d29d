#pragma once
// A command run as a child process, as a user runs it, measured: its wall time and its peak resident
// memory (wait4's rusage: the largest of the command and the children it waited for).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace ks::bench {

struct Measured {
  double seconds = 0;
  double peak_mb = 0;  // peak resident set, MB (10^6 bytes)
  int exit_code = 0;
};

// Runs `args` (args[0] the program) with its standard output sent to `stdout_path`; exits the
// benchmark when the command cannot be started or is killed.
inline Measured measure_command(const std::vector<std::string>& args, const std::string& stdout_path = "/dev/null") {
  std::fflush(stdout);  // or the child would print what is still buffered a second time
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  if (child < 0) {
    std::perror("fork");
    std::exit(1);
  }
  if (child == 0) {
    if (!std::freopen(stdout_path.c_str(), "w", stdout)) ::_exit(127);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  ::wait4(child, &status, 0, &usage);
  Measured m;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.peak_mb = static_cast<double>(usage.ru_maxrss) * 1024 / 1e6;  // ru_maxrss is in KiB
  if (!WIFEXITED(status)) {
    std::fprintf(stderr, "killed (status %d): %s\n", status, args.front().c_str());
    std::exit(1);
  }
  m.exit_code = WEXITSTATUS(status);
  return m;
}

}  // namespace ks::bench
