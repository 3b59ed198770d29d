// Reading a results file in child processes, checking what its rows say against each other, and
// marking a file found sound (damage_check.h).
#include "store/damage_check.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernels/common/cores.h"
#include "store/results_tables.h"
#include "store/strings_check.h"

namespace ks {

namespace {

// The first table whose type, as the file describes it, is not the one its layout writes: an object
// header carries no checksum in this format, and a flipped bit in a type's description (a member's
// size, sign or offset) would read every row as other numbers. Empty when all are as written.
std::string first_retyped_table(ResultsFile::Impl& impl) {
  std::string retyped;
  impl.each_table([&](std::string_view name, const auto& table, hid_t file_type) {
    if (retyped.empty() && table && !table->stored_as(file_type))
      retyped = fmt::format(
          "the column types of {} are not those kernelsweep writes (the dataset's description of them is damaged)",
          name);
  });
  return retyped;
}

// Reads one of `slices` parts of the file and checks it; what is wrong, or empty. Runs in a child:
// slice k reads the k-th part of the rows of /runs and of /samples, slice 0 the small tables too.
std::string read_slice(const std::filesystem::path& path, bool as_writer, std::uint64_t slice, std::uint64_t slices) {
  h5::QuietErrors quiet;
  try {
    h5::Handle file = open_file(path, as_writer ? H5F_ACC_RDWR : H5F_ACC_RDONLY, false);
    if (as_writer) repair_end_of_allocation(file.get());  // as open_for_append will
    ResultsFile::Impl impl(path, std::move(file), ResultsFile::Impl::Mode::ReadOnly);
    const std::int64_t version = impl.layout_version;
    if (auto what = first_retyped_table(impl); !what.empty()) return what;
    const std::uint64_t samples = impl.samples->size();
    const std::uint64_t quantiles = impl.quantiles ? impl.quantiles->size() : 0;
    const std::uint64_t clocks = impl.sample_clocks ? impl.sample_clocks->size() : 0;
    const auto part = [&](std::uint64_t total) {  // [first, end) of this slice
      return std::make_pair(total / slices * slice + std::min(slice, total % slices),
                            total / slices * (slice + 1) + std::min(slice + 1, total % slices));
    };
    // A block of rows at a time: a file of millions of rows is checked in the memory of a few.
    std::string problem;
    const auto [first_row, end_row] = part(impl.runs->size());
    // Each row /run_keys holds must say what its row of /runs says: status and a resume read it alone.
    const std::uint64_t keys_end = impl.run_keys ? std::min(end_row, impl.run_keys->size()) : first_row;
    std::vector<RunKey> keys;
    std::uint64_t keys_first = first_row;
    const auto key_at = [&](std::uint64_t row) -> const RunKey& {
      if (row >= keys_first + keys.size()) {
        keys_first = row;
        keys.resize(std::min<std::uint64_t>(kRunKeysChunk, keys_end - row));
        impl.run_keys->read(run_key_memory_type(), row, keys.size(), keys.data());
      }
      return keys[row - keys_first];
    };
    impl.runs->scan(impl.runs_layout, first_row, end_row - first_row, [&](std::uint64_t row, const StoredRun& run) {
      if (!problem.empty()) return;
      if (!strings_checked(run, impl.runs_layout, version)) {
        problem = unchecked_row_message(row, "/runs");
      } else if (!status_index(run.status)) {
        problem = fmt::format("row {} of /runs has status \"{}\", which is none of kernelsweep's", row, run.status);
      } else if (!nlohmann::json::accept(run.params_json)) {
        problem = fmt::format("row {} of /runs has parameters that are not JSON", row);
      } else if (run.samples_offset > samples || run.samples_count > samples - run.samples_offset) {
        problem = fmt::format("row {} of /runs points at samples {} to {}, and /samples holds {}", row,
                              run.samples_offset, run.samples_offset + run.samples_count, samples);
      } else if (run.quantiles_offset > quantiles || run.quantiles_count > quantiles - run.quantiles_offset) {
        problem = fmt::format("row {} of /runs points at quantiles {} to {}, and /quantiles holds {}", row,
                              run.quantiles_offset, run.quantiles_offset + run.quantiles_count, quantiles);
      } else if (run.sample_clocks_offset > clocks || run.sample_clocks_count > clocks - run.sample_clocks_offset) {
        problem = fmt::format("row {} of /runs points at sample clocks {} to {}, and /sample_clocks holds {}", row,
                              run.sample_clocks_offset, run.sample_clocks_offset + run.sample_clocks_count, clocks);
      } else if (row < keys_end && key_at(row) != run_key_of(run)) {
        problem = fmt::format(
            "row {} of /run_keys does not say what row {} of /runs says (its point, status or "
            "repetition differ)",
            row, row);
      }
    });
    if (!problem.empty()) return problem;
    std::vector<double> block;
    const auto read_blocks = [&block](const h5::Extendable1D& data, std::uint64_t first, std::uint64_t end) {
      constexpr std::uint64_t kBlock = 1u << 22;
      for (; first < end; first += kBlock) {
        block.resize(std::min(kBlock, end - first));
        data.read(H5T_NATIVE_DOUBLE, first, block.size(), block.data());
      }
    };
    const auto [first_sample, end_sample] = part(samples);
    read_blocks(*impl.samples, first_sample, end_sample);
    if (slice != 0) return "";
    // Every chunk of /quantiles and /sample_clocks read once: a damaged one fails its checksum here.
    if (impl.quantiles) impl.quantiles->scan(quantile_layout(), 0, quantiles, [](std::uint64_t, const Quantile&) {});
    if (impl.sample_clocks) read_blocks(*impl.sample_clocks, 0, clocks);
    std::string what = first_unchecked_row(*impl.environments, impl.documents_layout, version, "/environments");
    if (what.empty()) what = first_unchecked_row(*impl.protocols, impl.documents_layout, version, "/protocols");
    if (what.empty()) what = first_unchecked_row(*impl.ranks, impl.ranks_layout, version, "/ranks");
    if (what.empty()) what = first_unchecked_row(*impl.sessions, impl.sessions_layout, version, "/sessions");
    return what;
  } catch (const std::exception& error) { return error.what(); }
}

// How long the child may read: 10 s and 1 s per 20 MB, generous for a sound file, which reads at
// hundreds of MB/s from a local disk (a file of 100,000 runs, 170 MB, in half a second).
std::chrono::seconds reading_deadline(const std::filesystem::path& path) {
  std::error_code error;
  const auto bytes = std::filesystem::file_size(path, error);
  return std::chrono::seconds(10 + (error ? 0 : bytes / (20u << 20)));
}

// What went wrong in the child, from its exit status and what it wrote to the pipe.
std::string child_outcome(int status, const std::string& written) {
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  if (WIFEXITED(status)) return written.empty() ? "it could not be read" : written;
  const int signal = WTERMSIG(status);
  return fmt::format("reading it crashed the HDF5 library (SIG{})", sigabbrev_np(signal) ? sigabbrev_np(signal) : "?");
}

void refuse_damaged(const std::filesystem::path& path, const std::string& what) {
  throw DamagedResultsFile(fmt::format(
      "results file {} is damaged: {}; it cannot be read safely. h5dump -H shows what HDF5 still reads of it, and its "
      "kernelindex documents hold the figures of the results stored before the damage; move it aside and run the "
      "sweep again (or --resume into a fresh file)",
      path.string(), what));
}

// How many children read a file: KERNELSWEEP_CHECK_READERS when set (1 to 64), else one per core
// this process may use, up to 8, as long as each has 64 MB or more to read (a small file is read by
// one; starting more would cost more than it saves).
std::uint64_t reading_slices(const std::filesystem::path& path) {
  if (const char* given = std::getenv("KERNELSWEEP_CHECK_READERS"); given && *given)
    return std::clamp<std::uint64_t>(std::strtoull(given, nullptr, 10), 1, 64);
  std::error_code error;
  const auto bytes = std::filesystem::file_size(path, error);
  const int cores = count_usable_cores();
  const std::uint64_t by_size = error ? 1 : std::max<std::uint64_t>(1, bytes / (64u << 20));
  return std::clamp<std::uint64_t>(std::min<std::uint64_t>(by_size, static_cast<std::uint64_t>(cores)), 1, 8);
}

// A child reading a slice of the file, and what it has written to its pipe.
struct SliceReader {
  pid_t pid = -1;
  int pipe = -1;  // closed (-1) once the child has closed its end
  std::string written;
};

// Starts a child reading slice `slice` of `slices`.
SliceReader start_slice_reader(const std::filesystem::path& path, bool as_writer, std::uint64_t slice,
                               std::uint64_t slices) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw ResultsFileError(fmt::format("pipe2: {}", std::strerror(errno)));
  std::fflush(nullptr);  // the child must not write out what the parent has buffered
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) throw ResultsFileError(fmt::format("fork: {}", std::strerror(errno)));
  if (child == 0) {
    // The reader goes with its parent, and in any case at its deadline: a child looping inside HDF5
    // must not outlive the command that started it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::alarm(static_cast<unsigned>(reading_deadline(path).count()) + 5);
    ::close(pipe_fds[0]);
    const std::string what = read_slice(path, as_writer, slice, slices);
    if (!what.empty()) (void)!::write(pipe_fds[1], what.data(), what.size());
    ::_exit(what.empty() ? 0 : 1);  // no destructors, no HDF5 atexit: the child writes nothing to the file
  }
  ::close(pipe_fds[1]);
  return {child, pipe_fds[0], ""};
}

// Takes in what the readers write until each has closed its pipe; false when the deadline came first.
bool collect_until_closed(std::vector<SliceReader>& readers, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    std::vector<pollfd> waits;
    std::vector<SliceReader*> waiting;
    for (SliceReader& reader : readers)
      if (reader.pipe >= 0) {
        waits.push_back({reader.pipe, POLLIN, 0});
        waiting.push_back(&reader);
      }
    if (waits.empty()) return true;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    const int ready = ::poll(waits.data(), waits.size(), static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) return true;  // nothing more can be heard; the exit statuses tell
    for (std::size_t i = 0; ready > 0 && i < waits.size(); ++i) {
      if (waits[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(waiting[i]->pipe, buffer, sizeof buffer);
      if (n > 0) {
        waiting[i]->written.append(buffer, static_cast<std::size_t>(n));
      } else {  // the child ended (or closed the pipe)
        ::close(waiting[i]->pipe);
        waiting[i]->pipe = -1;
      }
    }
  }
}

// --- the mark of a file found sound (damage_check.h says what it holds and when it is set) ------------

const char* checked_attribute(bool as_writer) {
  return as_writer ? "user.kernelsweep.checked-to-append" : "user.kernelsweep.checked-to-read";
}

// What the mark holds for a file of this status.
std::string mark_of(const struct stat& status) {
  return fmt::format("size {} modified {}.{:09} inode {}", static_cast<long long>(status.st_size),
                     static_cast<long long>(status.st_mtim.tv_sec), static_cast<long>(status.st_mtim.tv_nsec),
                     static_cast<unsigned long long>(status.st_ino));
}

// What the mark holds for the file as it is now; empty when it cannot be read.
std::string checked_mark(const std::filesystem::path& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return "";
  return mark_of(status);
}

void set_mark(const std::filesystem::path& path, bool as_writer, const std::string& mark) {
  (void)::setxattr(path.c_str(), checked_attribute(as_writer), mark.data(), mark.size(), 0);
}

bool marked_checked(const std::filesystem::path& path, bool as_writer) {
  const std::string mark = checked_mark(path);
  char stored[256];
  const ssize_t n = ::getxattr(path.c_str(), checked_attribute(as_writer), stored, sizeof stored);
  return !mark.empty() && n > 0 && std::string_view(stored, static_cast<std::size_t>(n)) == mark;
}

// Marks the file as it was when the reading began (`read`), provided it is so still (a running
// sweep may write to a file that status reads) and settled. Best effort: a filesystem without user
// attributes, or a file not ours to mark, keeps no mark.
void mark_checked(const std::filesystem::path& path, bool as_writer, const std::string& read) {
  constexpr auto kSettled = std::chrono::seconds(3);  // past any filesystem's time granularity
  struct stat status {};
  if (read.empty() || ::stat(path.c_str(), &status) != 0 || mark_of(status) != read) return;
  const auto modified = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::seconds(status.st_mtim.tv_sec)));
  if (std::chrono::system_clock::now() - modified < kSettled) return;
  set_mark(path, as_writer, read);
}

}  // namespace

void mark_written(const std::filesystem::path& path) {
  struct stat closed {};
  if (::stat(path.c_str(), &closed) != 0) return;
  const bool whole_seconds = closed.st_mtim.tv_nsec == 0;
  std::this_thread::sleep_for(whole_seconds ? std::chrono::milliseconds(1050) : std::chrono::milliseconds(20));
  const std::string mark = checked_mark(path);
  if (mark != mark_of(closed)) return;
  for (bool as_writer : {false, true}) set_mark(path, as_writer, mark);
}

void forget_checked(const std::filesystem::path& path) {
  for (bool as_writer : {false, true}) (void)::removexattr(path.c_str(), checked_attribute(as_writer));
}

void check_readable(const std::filesystem::path& path, bool as_writer) {
  if (!std::filesystem::exists(path)) return;  // opening says so, with HDF5's words
  if (marked_checked(path, as_writer)) return;
  const std::string read = checked_mark(path);
  const std::uint64_t slices = reading_slices(path);
  std::vector<SliceReader> readers;
  for (std::uint64_t slice = 0; slice < slices; ++slice)
    readers.push_back(start_slice_reader(path, as_writer, slice, slices));
  const bool in_time = collect_until_closed(readers, std::chrono::steady_clock::now() + reading_deadline(path));
  std::string what;
  for (SliceReader& reader : readers) {
    if (reader.pipe >= 0) ::close(reader.pipe);
    if (!in_time) ::kill(reader.pid, SIGKILL);
    int status = 0;
    while (::waitpid(reader.pid, &status, 0) < 0 && errno == EINTR) {}
    if (what.empty()) what = child_outcome(status, reader.written);
  }
  if (!in_time) refuse_damaged(path, fmt::format("reading it did not end within {} s", reading_deadline(path).count()));
  if (!what.empty()) refuse_damaged(path, what);
  mark_checked(path, as_writer, read);
}

}  // namespace ks
