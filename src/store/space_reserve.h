#pragma once
// Free space held for a file past its end, so that the writes of its next batch cannot fail for
// want of space.
//
// A write that fails half-way through (a full disk, a quota) is what damages an HDF5 file: H5Fflush
// updates the metadata of the tables in place and appends what is new, and an append that fails after
// some metadata was rewritten leaves a file no reader opens. HDF5 1.10 has no journal to roll back
// to. So the store asks the filesystem for the space first: before each batch, the blocks past the
// file's end that the batch may need are allocated to the file (fallocate with FALLOC_FL_KEEP_SIZE:
// the file's size, and so what HDF5 sees, does not change), and HDF5's writes land in them. When the
// filesystem cannot give them, StorageFullError is thrown before HDF5 touches the file, which stays
// as it was at its last flush. The blocks not used go back when the reserve is closed (after the
// file): truncating a file to its own size frees what lies past its end. A writer killed before
// that leaves them to the file until its next writer closes it.
//
// Filesystems without fallocate (some network filesystems) get a weaker check: the space the
// filesystem reports free to the user (statvfs) must hold the reserve. A quota is not seen there.
#include <cstdint>
#include <filesystem>

#include "store/h5.h"

namespace ks {

// The filesystem could not give the space a write needs: nothing was written.
struct StorageFullError : ResultsFileError {
  using ResultsFileError::ResultsFileError;
};

class SpaceReserve {
 public:
  SpaceReserve() = default;
  // Holds a descriptor of `path` (the file must exist) for the reservations.
  explicit SpaceReserve(const std::filesystem::path& path);
  SpaceReserve(SpaceReserve&& other) noexcept;
  SpaceReserve& operator=(SpaceReserve&& other) noexcept;
  ~SpaceReserve();  // gives the blocks past the file's end back

  // Makes sure `bytes` past the file's current end are the file's. Throws StorageFullError saying
  // how much could not be had, and why (ENOSPC, EDQUOT, EFBIG), when they are not; the message
  // does not name the file (the store's messages do).
  void ensure(std::uint64_t bytes);
  // Gives the blocks past the file's end back to the filesystem now, for what is written next.
  void give_back();
  bool holds_a_file() const { return fd_ >= 0; }

 private:
  void close();
  int fd_ = -1;
  std::filesystem::path path_;
};

}  // namespace ks
