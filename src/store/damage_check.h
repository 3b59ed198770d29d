#pragma once
// The check that stands before every open of a results file, and the mark that spares a file found
// sound a second one: a damaged file is refused with a message instead of crashing or hanging the
// command that opens it.
//
// HDF5 trusts what it reads: on a damaged file (a flipped byte, a truncation, a writer killed inside
// H5Fflush) it can crash the process or loop forever, and no error is raised that could be caught.
// So before any command opens a results file, a child process reads all of it (the root attributes,
// every table, every sample) and checks what the rows say against each other; the command opens the
// file only when the child ends well within its deadline. A crash, a hang or a failed check becomes
// a one-line refusal that says what is wrong and what to do.
#include <filesystem>

#include "store/h5.h"

namespace ks {

// A results file that cannot be read safely: reading it crashed or hung a child process, or what it
// holds contradicts itself. The message says what is wrong and what to do.
struct DamagedResultsFile : ResultsFileError {
  using ResultsFileError::ResultsFileError;
};

// Reads the whole file in child processes first (several on a file large enough, each a slice),
// unless it is marked as found sound as it is now; throws DamagedResultsFile when reading fails in
// any way.
void check_readable(const std::filesystem::path& path, bool as_writer);

// --- remembering a file found sound -----------------------------------------------------------------
//
// Reading a million rows to check them takes seconds, and a finished sweep's file is read again and
// again (status, show, report, compare). A file read whole and found sound is marked so in an
// extended attribute that holds its size, modification time and inode at that moment; while all
// three are the same, the file holds the bytes found sound, and opening it again skips the reading.
// Whatever writes to the file (a writer, killed or not; a disk that filled; a program that flips a
// byte) changes its modification time, and a copy is another inode without the mark: those are read
// again. A file a reader found sound is not marked when modified within the last few seconds: some
// filesystems (Lustre) keep times in whole seconds, and a write in the same second would leave the
// time as it was (a writer marks the file it finished itself: mark_written). Where the filesystem
// keeps no user attributes, every open reads the file.

// A writer that closes the file after every one of its writes succeeded leaves it as sound as it
// found it (checked when opened, or made new): it marks both ways of opening it as checked, so that
// the status or resume after a sweep does not read a million rows again. No other kernelsweep writes
// to the file while the writer lock is held, and the next writer takes the marks off before its first
// write (forget_checked). What remains is a change by another program just after the mark within the
// same tick of the filesystem's clock, which would leave the time as it was: the writer waits out one
// tick first (the kernel's clock moves in steps of a few milliseconds; a filesystem that keeps whole
// seconds, whose times have no nanoseconds, a second), and marks the file only if nothing changed.
void mark_written(const std::filesystem::path& path);

// Takes the marks off before a writer's first write: a writer killed within the second of its
// predecessor's mark, on a filesystem of whole-second times, leaves no mark that still matches.
void forget_checked(const std::filesystem::path& path);

}  // namespace ks
