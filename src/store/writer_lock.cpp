#include "store/writer_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/processes.h"

namespace ks {
namespace {

using Json = nlohmann::json;

std::string read_whole(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Creates the lock file with `content`; false when it exists already.
bool create_exclusively(const std::filesystem::path& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    throw ResultsFileError(fmt::format("cannot make the lock file {}: {}", path.string(), std::strerror(errno)));
  }
  const bool written = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  const int error = errno;
  ::close(fd);
  if (!written) {
    ::unlink(path.c_str());
    throw ResultsFileError(fmt::format("cannot write the lock file {}: {}", path.string(), std::strerror(error)));
  }
  return true;
}

// What the lock file says of its writer (a JSON object of these keys).
struct Writer {
  std::string host;
  long pid = 0;
  std::string process_start, started_at, command_line;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Writer, host, pid, process_start, started_at, command_line)

struct Holder : Writer {
  double seconds_since_heartbeat = 0;
};

// Who holds the lock file, as it says; nullopt when it vanished meanwhile. A file that does not
// parse (cut short by a full disk, say) names nobody: it is stale unless its heartbeat is fresh.
std::optional<Holder> read_holder(const std::filesystem::path& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return std::nullopt;
  Holder holder;
  const auto modified = std::chrono::system_clock::time_point(std::chrono::seconds(status.st_mtim.tv_sec)) +
                        std::chrono::nanoseconds(status.st_mtim.tv_nsec);
  holder.seconds_since_heartbeat = std::chrono::duration<double>(std::chrono::system_clock::now() - modified).count();
  const Json content = Json::parse(read_whole(path), nullptr, false);
  if (content.is_object()) static_cast<Writer&>(holder) = content.get<Writer>();
  return holder;
}

// Gone: no such process, a zombie (killed, its parent not yet told), or another process that got
// the same pid since (its start time differs).
bool process_is_gone(long pid, const std::string& start_ticks) {
  if (pid <= 0) return true;
  const auto stat = process_stat(static_cast<pid_t>(pid));
  if (!stat) return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
  if (stat->state == 'Z' || stat->state == 'X') return true;
  return !start_ticks.empty() && stat->start_ticks != start_ticks;
}

bool is_stale(const Holder& holder, const std::string& this_host) {
  if (holder.host == this_host && !holder.host.empty()) return process_is_gone(holder.pid, holder.process_start);
  return holder.seconds_since_heartbeat > static_cast<double>(WriterLock::kStaleAfter.count());
}

// Moves a stale lock file aside, checking that what was moved is the file judged stale (another
// writer may have taken it over in between, and its fresh lock must stay). True when it is gone.
bool remove_stale(const std::filesystem::path& path, const std::string& judged_content) {
  const auto aside = std::filesystem::path(path) += fmt::format(".stale-{}", ::getpid());
  if (::rename(path.c_str(), aside.c_str()) != 0) return errno == ENOENT;
  if (read_whole(aside) != judged_content) {
    ::rename(aside.c_str(), path.c_str());  // not the file judged: put it back
    return false;
  }
  ::unlink(aside.c_str());
  return true;
}

std::string busy_message(const std::filesystem::path& results_file, const std::filesystem::path& lock,
                         const Holder& holder) {
  return fmt::format(
      "results file {} is being written by another kernelsweep run (host {}, pid {}, since {}, heartbeat {:.0f} s ago: "
      "{}); wait for it to end, or write elsewhere with --output-dir; if that run is gone, remove {}",
      results_file.string(), holder.host.empty() ? "unknown" : holder.host, holder.pid,
      holder.started_at.empty() ? "unknown" : holder.started_at, holder.seconds_since_heartbeat,
      holder.command_line.empty() ? "command unknown" : holder.command_line, lock.string());
}

}  // namespace

std::filesystem::path WriterLock::lock_path(const std::filesystem::path& results_file) {
  return std::filesystem::path(results_file) += ".lock";
}

WriterLock WriterLock::acquire(const std::filesystem::path& results_file, const std::string& host,
                               const std::string& command_line) {
  const auto path = lock_path(results_file);
  const long pid = ::getpid();
  const auto self = process_stat(static_cast<pid_t>(pid));
  const Writer writer{host, pid, self ? self->start_ticks : "", iso_utc_now(), command_line};
  const std::string content = Json(writer).dump() + "\n";
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (create_exclusively(path, content)) return WriterLock(path, content);
    const std::string judged = read_whole(path);
    const auto holder = read_holder(path);
    if (!holder) continue;  // released meanwhile
    if (!is_stale(*holder, host)) throw ResultsFileBusy(busy_message(results_file, path, *holder));
    if (!remove_stale(path, judged)) continue;
  }
  const auto holder = read_holder(path);
  throw ResultsFileBusy(busy_message(results_file, path, holder.value_or(Holder{})));
}

WriterLock::WriterLock(std::filesystem::path path, std::string content)
    : path_(std::move(path)), content_(std::move(content)), last_beat_(std::chrono::steady_clock::now()) {}

WriterLock::WriterLock(WriterLock&& other) noexcept { *this = std::move(other); }

WriterLock& WriterLock::operator=(WriterLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::exchange(other.path_, {});
    content_ = std::exchange(other.content_, {});
    last_beat_ = other.last_beat_;
  }
  return *this;
}

WriterLock::~WriterLock() { release(); }

void WriterLock::heartbeat() {
  if (path_.empty()) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_beat_ < kHeartbeat) return;
  last_beat_ = now;
  ::utimensat(AT_FDCWD, path_.c_str(), nullptr, 0);  // a failure shows as an old heartbeat, nothing worse
}

void WriterLock::release() {
  if (path_.empty()) return;
  if (read_whole(path_) == content_) ::unlink(path_.c_str());
  path_.clear();
}

}  // namespace ks
