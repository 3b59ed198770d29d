#pragma once
// What /proc says of the processes on this host. A /proc/PID file read while its process ends fails
// with ESRCH mid-read (std::ifstream then throws from deep inside a read); here that reads as the
// process being gone, which is what the callers ask about.
#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ks {

// The whole of /proc/PID/<name> (cmdline, stat, wchan, ...); nullopt once the process is gone or the
// file cannot be read.
std::optional<std::string> read_process_file(pid_t pid, std::string_view name);

// The fields of /proc/PID/stat that callers use.
struct ProcessStat {
  char state = '?';  // R running, S sleeping, D disk wait, T stopped, Z zombie, ...
  pid_t parent = 0;
  std::string start_ticks;  // start time, clock ticks after boot: tells a pid's reuse apart
};

// nullopt when there is no such process.
std::optional<ProcessStat> process_stat(pid_t pid);

// Every pid /proc lists now.
std::vector<pid_t> process_ids();

}  // namespace ks
