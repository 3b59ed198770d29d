#include "support/small_disk.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ks::testing {

std::unique_ptr<SmallDisk> SmallDisk::make(const std::filesystem::path& mount_point, int mebibytes, std::string& why) {
  std::filesystem::create_directories(mount_point);
  const std::string options = "size=" + std::to_string(mebibytes) + "m";
  if (::mount("kernelsweep-test", mount_point.c_str(), "tmpfs", 0, options.c_str()) != 0) {
    why = "cannot mount a tmpfs on " + mount_point.string() + " (" + std::strerror(errno) + "): a full disk needs root";
    return nullptr;
  }
  return std::unique_ptr<SmallDisk>(new SmallDisk(mount_point));
}

SmallDisk::~SmallDisk() { ::umount2(path_.c_str(), MNT_DETACH); }

std::uint64_t SmallDisk::free_bytes() const {
  struct statvfs fs {};
  if (::statvfs(path_.c_str(), &fs) != 0)
    throw std::runtime_error("statvfs " + path_.string() + ": " + std::strerror(errno));
  return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
}

void SmallDisk::fill(std::uint64_t leave_bytes) {
  const auto filler = path_ / "filler";
  // What is free shrinks while others write: take what there is, again, until it is taken.
  for (int attempt = 0; attempt < 20; ++attempt) {
    const std::uint64_t free = free_bytes();
    if (free <= leave_bytes) return;
    const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("cannot open " + filler.string() + ": " + std::strerror(errno));
    struct stat status {};
    ::fstat(fd, &status);
    const int result = ::fallocate(fd, 0, status.st_size, static_cast<off_t>(free - leave_bytes));
    const int error = errno;
    ::close(fd);
    if (result == 0) return;
    if (error != ENOSPC) throw std::runtime_error("cannot fill " + path_.string() + ": " + std::strerror(error));
  }
}

void SmallDisk::empty() { std::filesystem::remove(path_ / "filler"); }

}  // namespace ks::testing
