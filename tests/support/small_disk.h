#pragma once
// A small filesystem of its own for a test (a tmpfs mounted on a fresh folder), to fill up: a full
// disk, for real. Mounting takes root (CAP_SYS_ADMIN); where it is refused, make() says why and the
// test skips itself.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace ks::testing {

class SmallDisk {
 public:
  // Mounts a tmpfs of `mebibytes` on `mount_point` (made if missing). Null, with `why` set, when the
  // machine does not let this process mount one.
  static std::unique_ptr<SmallDisk> make(const std::filesystem::path& mount_point, int mebibytes, std::string& why);
  ~SmallDisk();  // unmounts (lazily, should a process still hold a file there)
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::uint64_t free_bytes() const;
  // Takes all the free space but `leave_bytes` with one file (path()/filler), or gives it back.
  void fill(std::uint64_t leave_bytes);
  void empty();

 private:
  explicit SmallDisk(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

}  // namespace ks::testing
