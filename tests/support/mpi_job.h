#pragma once
// A kernelsweep job under the real mpirun, run in the background and looked at from outside, as a
// user or a scheduler sees it: its processes (ranks, workers) from /proc, the writer that its lock
// file names, its exit code, and the rows its results file holds by point and status.
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace ks::testing {

// Starts `command` under /bin/sh in a process group of its own; its pid (the group's id).
pid_t start_in_background(const std::string& command);

// Waits for `job` to end; its exit code, or 128 + the signal that ended it.
int exit_code_of(pid_t job);

// Runs `command` in the background, waiting at most `seconds`; the exit code, or -1 after killing a
// job that ran past it (a hang).
int run_with_deadline(const std::string& command, double seconds);

// A process's argv, NUL-separated; empty once it is gone.
std::string command_line_of(pid_t pid);

// Every process below `root` (its children, theirs, ...), from /proc.
std::vector<pid_t> descendants(pid_t root);

// A line for each process below `job`: its pid, its state (R running, S sleeping, T stopped, ...), the
// kernel function it waits in, and its command line. What a hung job was doing, for a failure message.
std::string process_table(pid_t job);

// The processes of a job that run the test build's `subcommand`: "run" (the ranks) or "worker".
std::vector<pid_t> processes_running(pid_t job, const std::string& subcommand);

// The pid of the results file's writer (rank 0), as its lock file names it; 0 while there is no lock
// or it is not yet written (the file is made empty, then written).
pid_t writer_pid(const std::filesystem::path& results);

// Stops (SIGSTOP) a rank of `job` other than `writer`, and its workers first; its pid, or 0 when
// there is none. `nth` picks among those ranks (in /proc's order, wrapping around).
pid_t stop_a_rank_other_than(pid_t job, pid_t writer, std::size_t nth = 0);

// Each point's rows in a results file, by status.
std::map<std::string, std::map<std::string, int>> rows_by_point(const std::filesystem::path& results);

}  // namespace ks::testing
