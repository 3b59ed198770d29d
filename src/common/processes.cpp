#include "common/processes.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

namespace ks {

std::optional<std::string> read_process_file(pid_t pid, std::string_view name) {
  const std::string path = fmt::format("/proc/{}/{}", pid, name);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      text.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    ::close(fd);
    if (n < 0) return std::nullopt;
    return text;
  }
}

std::optional<ProcessStat> process_stat(pid_t pid) {
  const auto text = read_process_file(pid, "stat");
  if (!text) return std::nullopt;
  const auto name_end = text->rfind(')');  // the command name, in parentheses, may hold spaces and ')'
  if (name_end == std::string::npos || name_end + 2 >= text->size()) return std::nullopt;
  std::istringstream fields(text->substr(name_end + 2));
  ProcessStat stat;
  if (!(fields >> stat.state >> stat.parent)) return std::nullopt;
  std::string field;
  for (int i = 5; i <= 22 && fields >> field; ++i)  // field 22 is starttime
    if (i == 22) stat.start_ticks = field;
  return stat;
}

std::vector<pid_t> process_ids() {
  std::vector<pid_t> pids;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    pid_t pid = 0;
    const auto [end, parsed] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (parsed == std::errc() && end == name.data() + name.size()) pids.push_back(pid);
  }
  return pids;
}

}  // namespace ks
