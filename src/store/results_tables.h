#pragma once
// An open results file's tables (ResultsFile::Impl) and how the file is opened. The writer
// (results_appender.cpp), the readers (results_reader.cpp) and the damage check, which opens the file
// in a child process, all work on these same tables, made from the file's own layout version.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "store/h5_table.h"
#include "store/results_file.h"
#include "store/results_layout.h"
#include "store/space_reserve.h"

namespace ks {

// The space reserved past the file's end before every write (store/space_reserve.h): what HDF5 may
// allocate beyond what a batch itself holds (chunks held in the caches, which are written at the
// flush, B-tree nodes, heaps of strings, the metadata blocks), with a wide margin; a batch adds
// four times its own size.
constexpr std::uint64_t kReserveBytes = 32u << 20;

struct ResultsFile::Impl {
  enum class Mode { Create, Append, ReadOnly };

  // Opens (or, for Create, makes) the tables of the file, of the layout its root attributes name (a
  // file not ours is refused first); Append first clears what a killed writer left past their ends
  // and completes /run_keys.
  Impl(std::filesystem::path file_path, h5::Handle file_handle, Mode mode);

  // /run_keys is appended right after /runs: a writer killed or refused between the two leaves it
  // short, and its missing rows are made again from /runs here, so that readers find it whole.
  void complete_run_keys();

  // Whether /run_keys describes every row of /runs (read-only, a short one is read around).
  bool run_keys_whole() const { return run_keys && run_keys->size() == runs->size(); }

  hid_t id() const { return file.get(); }

  // Calls visit(name, table, the type its rows have in the file) for each table of the layout, the
  // table being the optional that holds it (empty in a file of an older layout).
  template <class Visit> void each_table(Visit&& visit) {
    visit("/runs", runs, runs_layout.file_type());
    visit("/samples", samples, H5T_IEEE_F64LE);
    visit("/quantiles", quantiles, quantile_layout().file_type());
    visit("/sample_clocks", sample_clocks, H5T_IEEE_F64LE);
    visit("/run_keys", run_keys, run_key_file_type());
    visit("/environments", environments, documents_layout.file_type());
    visit("/protocols", protocols, documents_layout.file_type());
    visit("/ranks", ranks, ranks_layout.file_type());
    visit("/sessions", sessions, sessions_layout.file_type());
  }

  // The keys that make puts idempotent across sessions: digests and rank rows already stored.
  void remember_stored_keys();

  void put_document(h5::Table<DigestedDocument>& table, std::set<std::string>& digests, const std::string& digest,
                    const std::string& json_text);

  // Datasets first, then the file: HDF5 keeps a file open while any of its objects is.
  void close();

  std::filesystem::path path;
  bool writable;
  bool write_failed = false;  // some write threw: finish() leaves the file unmarked (read again)
  // Writable files only. Declared before `file`, so that it gives its blocks back after the file
  // is closed, whichever way the object goes.
  SpaceReserve reserve;
  h5::Handle file;
  std::int64_t layout_version;  // the file's: a file of layout 1 is appended to as layout 1
  h5::CompoundLayout<StoredRun> runs_layout;
  h5::CompoundLayout<DigestedDocument> documents_layout;
  h5::CompoundLayout<RankInfo> ranks_layout;
  h5::CompoundLayout<SessionInfo> sessions_layout;
  std::optional<h5::Table<StoredRun>> runs;
  std::optional<h5::Extendable1D> run_keys;  // layout 6 on
  std::optional<h5::Extendable1D> samples;
  std::optional<h5::Extendable1D> sample_clocks;  // layout 4 on
  std::optional<h5::Table<Quantile>> quantiles;   // layout 3 on
  std::optional<h5::Table<DigestedDocument>> environments, protocols;
  std::optional<h5::Table<RankInfo>> ranks;
  std::optional<h5::Table<SessionInfo>> sessions;
  std::set<std::string> environment_digests, protocol_digests;
  std::vector<RankInfo> stored_ranks;
};

// Between flushes the writer's metadata stays in memory: HDF5 evicting a dirty entry early (the
// dataset's new size, a B-tree node, a heap of strings) would put part of an unflushed append on
// disk, and a writer killed then leaves a file whose /runs counts rows whose strings were never
// written. With evictions off, metadata reaches the file only in H5Fflush. Automatic resizing must
// be off for evictions to be off.
void set_metadata_evictions(hid_t file, bool enabled);

// A writer killed inside H5Fflush may have written metadata past the end of allocation (EOA) that
// the superblock records, since the superblock is written last; HDF5 then refuses to read it ("len
// not positive after adjustment for EOA"). Raising the EOA to the file's real size (what
// `h5clear --increment=0` does) makes that metadata readable again; on a sound file it changes nothing.
void repair_end_of_allocation(hid_t file);

// The file access properties every open uses. The format is capped at HDF5 1.8's: that superblock
// has no "file is open for writing" flag, which a killed writer would leave set (HDF5 1.10 then
// refuses to open the file until `h5clear -s`), and 1.8-era readers open the file too.
h5::Handle file_access(bool file_locking);

// The file opened with `flags` (H5F_ACC_RDWR or H5F_ACC_RDONLY): by a writer with HDF5's file locking
// (beside the writer lock), by readers without it, so that they read a file a running sweep writes.
h5::Handle open_file(const std::filesystem::path& path, unsigned flags, bool file_locking);

// Runs `body` with HDF5's stderr printing off, and prefixes any failure with the file and the action.
template <class Body> auto guarded(const std::filesystem::path& path, std::string_view action, Body&& body)
    -> decltype(body()) {
  h5::QuietErrors quiet;
  try {
    return body();
  } catch (const StorageFullError& error) {
    throw StorageFullError("results file " + path.string() + ": " + std::string(action) + ": " + error.what());
  } catch (const ResultsFileError& error) {
    throw ResultsFileError("results file " + path.string() + ": " + std::string(action) + ": " + error.what());
  }
}

}  // namespace ks
