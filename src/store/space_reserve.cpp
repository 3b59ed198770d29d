#include "store/space_reserve.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace ks {
namespace {

std::string mebibytes(std::uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

// statvfs's view, for filesystems that cannot allocate ahead: enough free blocks for an unprivileged user?
void check_free_space(int fd, std::uint64_t bytes) {
  struct statvfs fs {};
  if (::fstatvfs(fd, &fs) != 0) return;  // nothing known: the write itself will tell
  const std::uint64_t available = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (available < bytes)
    throw StorageFullError(fmt::format("{} free on its filesystem, {} needed before the next write",
                                       mebibytes(available), mebibytes(bytes)));
}

}  // namespace

SpaceReserve::SpaceReserve(const std::filesystem::path& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0)
    throw ResultsFileError(fmt::format("{}: cannot open it to reserve space: {}", path.string(), std::strerror(errno)));
}

SpaceReserve::SpaceReserve(SpaceReserve&& other) noexcept { *this = std::move(other); }

SpaceReserve& SpaceReserve::operator=(SpaceReserve&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

SpaceReserve::~SpaceReserve() { close(); }

void SpaceReserve::give_back() {
  if (fd_ < 0) return;
  // Truncating a file to its own size frees the blocks reserved past its end (ext4, XFS, tmpfs).
  struct stat status {};
  if (::fstat(fd_, &status) == 0) (void)::ftruncate(fd_, status.st_size);
}

void SpaceReserve::close() {
  if (fd_ < 0) return;
  give_back();
  ::close(fd_);
  fd_ = -1;
}

void SpaceReserve::ensure(std::uint64_t bytes) {
  if (fd_ < 0 || bytes == 0) return;
  struct stat status {};
  if (::fstat(fd_, &status) != 0)
    throw ResultsFileError(fmt::format("{}: cannot read its size: {}", path_.string(), std::strerror(errno)));
  int result;
  do {
    result = ::fallocate(fd_, FALLOC_FL_KEEP_SIZE, status.st_size, static_cast<off_t>(bytes));
  } while (result != 0 && errno == EINTR);
  if (result == 0) return;
  const int error = errno;
  if (error == EOPNOTSUPP || error == ENOSYS) return check_free_space(fd_, bytes);
  throw StorageFullError(fmt::format("cannot reserve {} past the file's end for the next write: {}", mebibytes(bytes),
                                     std::strerror(error)));
}

}  // namespace ks
