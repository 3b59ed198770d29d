#include "support/mpi_job.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/processes.h"
#include "store/results_file.h"
#include "store/writer_lock.h"
#include "support/cli_runner.h"

namespace ks::testing {

namespace fs = std::filesystem;

pid_t start_in_background(const std::string& command) {
  const pid_t job = ::fork();
  if (job == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), nullptr);
    ::_exit(127);
  }
  return job;
}

int exit_code_of(pid_t job) {
  int status = 0;
  ::waitpid(job, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run_with_deadline(const std::string& command, double seconds) {
  const pid_t job = start_in_background(command);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (::waitpid(job, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      for (pid_t pid : descendants(job)) ::kill(pid, SIGKILL);
      ::kill(job, SIGKILL);
      ::waitpid(job, nullptr, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string command_line_of(pid_t pid) { return ks::read_process_file(pid, "cmdline").value_or(""); }

std::vector<pid_t> descendants(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  for (pid_t pid : ks::process_ids())
    if (const auto stat = ks::process_stat(pid)) children[stat->parent].push_back(pid);
  std::vector<pid_t> found, todo{root};
  while (!todo.empty()) {
    const pid_t pid = todo.back();
    todo.pop_back();
    for (pid_t child : children[pid]) {
      found.push_back(child);
      todo.push_back(child);
    }
  }
  return found;
}

std::string process_table(pid_t job) {
  std::string table;
  for (pid_t pid : descendants(job)) {
    const auto stat = ks::process_stat(pid);
    const std::string wchan = ks::read_process_file(pid, "wchan").value_or("");
    std::string command = command_line_of(pid);
    std::replace(command.begin(), command.end(), '\0', ' ');
    table += fmt::format("  {} {} {:<24} {}\n", pid, stat ? stat->state : '-', wchan.empty() ? "-" : wchan,
                         command.substr(0, 200));
  }
  return table;
}

std::vector<pid_t> processes_running(pid_t job, const std::string& subcommand) {
  const std::string prefix = std::string(KS_TEST_CLI) + '\0' + subcommand + '\0';
  std::vector<pid_t> found;
  for (pid_t pid : descendants(job))
    if (command_line_of(pid).starts_with(prefix)) found.push_back(pid);
  return found;
}

pid_t writer_pid(const fs::path& results) {
  const auto lock = nlohmann::json::parse(read_text(WriterLock::lock_path(results)), nullptr, false);
  return lock.is_object() ? lock.value("pid", 0) : 0;
}

pid_t stop_a_rank_other_than(pid_t job, pid_t writer, std::size_t nth) {
  std::vector<pid_t> ranks = processes_running(job, "run");
  std::erase(ranks, writer);
  if (ranks.empty()) return 0;
  const pid_t rank = ranks[nth % ranks.size()];
  for (pid_t pid : descendants(rank)) ::kill(pid, SIGSTOP);
  ::kill(rank, SIGSTOP);
  return rank;
}

std::map<std::string, std::map<std::string, int>> rows_by_point(const fs::path& results) {
  std::map<std::string, std::map<std::string, int>> rows;
  for (const StoredRun& run : ResultsFile::open_read_only(results).read_runs()) ++rows[run.point_id][run.status];
  return rows;
}

}  // namespace ks::testing
