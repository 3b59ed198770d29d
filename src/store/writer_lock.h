#pragma once
// One writer per results file, whatever the filesystem and whatever HDF5_USE_FILE_LOCKING says.
//
// HDF5's own lock (flock on the file) is off where users turn it off (network filesystems that
// refuse flock, readers that set HDF5_USE_FILE_LOCKING=FALSE and pass it on to the writer), and
// two writers of one file then corrupt it. So the writer also holds a lock file beside the results
// file, NAME.h5.lock, made with O_CREAT|O_EXCL (atomic on local and network filesystems alike)
// and holding who writes: host, pid (with the process's start time, which tells a reused pid),
// start time and command line. While it writes, the writer
// touches the lock file (a heartbeat); a lock file whose writer is gone is taken over:
//   - on the same host, when its pid is no longer a running process (gone, a zombie, or reused);
//   - from another host, when its heartbeat is older than kStaleAfter (the pid cannot be asked).
// A live writer's lock makes acquire() refuse, naming that writer. The lock file goes away when
// the writer ends, cleanly or interrupted; a writer killed outright leaves it to be taken over.
#include <chrono>
#include <filesystem>
#include <string>

#include "store/h5.h"

namespace ks {

// Another live run writes the results file: acquire()'s refusal.
struct ResultsFileBusy : ResultsFileError {
  using ResultsFileError::ResultsFileError;
};

class WriterLock {
 public:
  static constexpr std::chrono::seconds kHeartbeat{10};
  static constexpr std::chrono::seconds kStaleAfter{90};

  // The lock file of a results file: NAME.h5.lock beside it.
  static std::filesystem::path lock_path(const std::filesystem::path& results_file);

  // Takes the lock of `results_file` for this process, on this `host` (its name and
  // `command_line` are recorded in the lock file). Throws ResultsFileBusy naming the live writer,
  // or ResultsFileError when the lock file cannot be made.
  static WriterLock acquire(const std::filesystem::path& results_file, const std::string& host,
                            const std::string& command_line);

  WriterLock() = default;
  WriterLock(WriterLock&& other) noexcept;
  WriterLock& operator=(WriterLock&& other) noexcept;
  ~WriterLock();  // release()

  // Touches the lock file when the last touch is kHeartbeat old (cheap to call often).
  void heartbeat();
  // Removes the lock file, if it is still this writer's.
  void release();

 private:
  explicit WriterLock(std::filesystem::path path, std::string content);
  std::filesystem::path path_;
  std::string content_;  // what this writer wrote into the lock file: how it knows the file is its own
  std::chrono::steady_clock::time_point last_beat_{};
};

}  // namespace ks
