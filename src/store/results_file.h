#pragma once
// The HDF5 results file of one run (docs/hdf5-layout.md describes the layout). Rank 0 alone writes
// it: the other ranks stream their RunRecords to rank 0, which appends them in batches and flushes.
//
// Crash safety (docs/hdf5-layout.md, "Writing, flushing and crashes"): flush() is H5Fflush, and a
// writer killed between flushes leaves a file that any reader opens as it was at the last flush
// (tests/unit/store_test.cpp, CrashAfterFlushKeepsFlushedRows): the format is capped at HDF5 1.8's
// (no "open for writing" superblock flag), metadata evictions are off between flushes, and
// open_for_append clears what a killed writer left past each table's end. A writer killed *inside*
// H5Fflush can still leave an unreadable file: HDF5 1.10 has no journal, and SWMR does not support
// variable-length strings. Not thread-safe: one thread of rank 0 uses it.
//
// The class is made of several files of the store, one concept each: results_layout.h (the schema:
// layout versions, tables, columns, root attributes), results_tables.h (the open file's tables),
// results_appender.cpp (rank 0's writing), results_reader.cpp (what the commands read),
// damage_check.h (the check before every open, and the mark that spares a file found sound a second
// one), strings_check.h (the checksum of each row's strings).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/point_id_set.h"
#include "store/damage_check.h"
#include "store/h5.h"
#include "store/line_diff.h"
#include "store/results_layout.h"
#include "store/stored_run.h"

namespace ks {

// A point of the file, from its rows in /runs: 64 bytes, not its rows' strings.
struct PointStatus {
  PointKey key;                  // point_key() of its id
  std::string_view status;       // of its latest row (rows are in arrival order: a rerun wins); one of kStatuses
  std::uint64_t first_row = 0;   // its first row in /runs
  std::uint64_t latest_row = 0;  // its latest row
  bool ever_passed = false;      // some row of it passed: --resume skips it
};

class ResultsFile {
 public:
  // Creates the file and its (empty) tables, writes the root attributes and the /sessions rows: the
  // one made from `info`, or `sessions` where given (a merged file lists the sessions of the files it
  // was made from). Throws ResultsFileError when `path` exists: the caller decides between --resume
  // and --overwrite.
  static ResultsFile create(const std::filesystem::path& path, const RunInfo& info,
                            const std::vector<SessionInfo>& sessions = {});
  // Reopens an existing file to append to its tables (--resume).
  // Both opens have the whole file read by a child process first, and throw DamagedResultsFile
  // when that crashes, hangs or finds rows that contradict the file (see damage_check.h).
  static ResultsFile open_for_append(const std::filesystem::path& path);
  // Opens for reading only (status, reports, tests). Without HDF5 file locking, so it also reads a
  // file a running sweep is writing, as of that sweep's last flush.
  static ResultsFile open_read_only(const std::filesystem::path& path);

  ResultsFile(ResultsFile&&) noexcept;
  ResultsFile& operator=(ResultsFile&&) noexcept;
  ~ResultsFile();  // closes without setting ended_at (as an interrupted run would leave it)

  const std::filesystem::path& path() const;

  // Appends the rows to /runs, their samples_ns to /samples and their quantiles to /quantiles,
  // setting each row's offsets and counts. A row's status must be one of kStatuses. A file of
  // layout 2 stores no quantiles.
  void append(std::vector<StoredRun>& batch);
  // Store the document once per digest; a digest already stored (this session or an earlier one) is skipped.
  void put_environment(const std::string& digest, const std::string& json_text);
  void put_protocol(const std::string& digest, const std::string& json_text);
  // Appends the rank's row unless an identical row is already stored.
  void put_rank(const RankInfo& rank);
  // Records a resumed session (create() records the first one from its RunInfo), and clears ended_at
  // until finish().
  void add_session(const SessionInfo& session);
  // Writes everything appended so far to the file: a crash after this loses none of it. Then, when
  // HDF5's metadata cache has grown past kMetadataCacheBytes, closes the file and opens it again, which
  // empties the cache: with evictions off (see results_tables.h) HDF5 keeps every metadata entry it
  // has made, and the heaps of a million rows' strings alone take more than a gigabyte.
  static constexpr std::size_t kMetadataCacheBytes = std::size_t{16} << 20;
  void flush();
  // The bytes HDF5's metadata cache holds for this file now.
  std::size_t metadata_cache_bytes() const;
  // Sets the root attribute ended_at and closes the file; the object is unusable afterwards.
  void finish(const std::string& ended_at);

  // Reading works on any open file (also one being appended to).
  RunInfo read_info() const;
  std::vector<StoredRun> read_runs() const;  // every row, without samples_ns
  // Rows [first, first + count) of /runs, without samples_ns: a large file read a batch at a time.
  std::vector<StoredRun> read_runs(std::uint64_t first, std::uint64_t count) const;
  std::vector<double> read_samples(std::uint64_t offset, std::uint64_t count) const;
  // A row's samples' SM clocks (its sample_clocks_offset and sample_clocks_count); none where they
  // were not read, and in a file of a layout before 4.
  std::vector<double> read_sample_clocks(std::uint64_t offset, std::uint64_t count) const;
  // A row's quantiles (its quantiles_offset and quantiles_count); none in a file of layout 2.
  std::vector<Quantile> read_quantiles(std::uint64_t offset, std::uint64_t count) const;
  std::vector<DigestedDocument> read_environments() const;
  std::vector<DigestedDocument> read_protocols() const;
  std::vector<RankInfo> read_ranks() const;
  std::vector<SessionInfo> read_sessions() const;
  // Every measurement with rows (a point, or one repetition of it: repetition_key), once, sorted by
  // key (PointKeyLess), through scan_point_keys: what status needs, without the rest of the table, in
  // about 50 bytes a row.
  std::vector<PointStatus> point_statuses() const;
  // Every row's measurement in row order, as status and a resume need it: visit(row, its key
  // (repetition_key), its status as an index into kStatuses). Reads /run_keys, 37 bytes a row and no
  // string, where the file has it whole (layout 6 on); the columns of /runs otherwise.
  void scan_point_keys(
      const std::function<void(std::uint64_t row, const PointKey& key, std::size_t status)>& visit) const;
  // Rows of /runs in row order, with only the named columns read (partial compound reads: the other
  // fields, and their strings, are never touched) and the rest left at their defaults, as are the
  // named columns the file's layout lacks (repetition before layout 4). The rows pass through one
  // reused block: a scan holds one block, never the table.
  void scan_runs(const std::vector<std::string_view>& columns,
                 const std::function<void(std::uint64_t row, const StoredRun& run)>& visit) const;
  // The same columns row by row, in row order, holding nothing: visit(row, point id, repetition,
  // status); the repetition is 0 in a file of a layout before 4.
  void scan_statuses(const std::function<void(std::uint64_t row, const std::string& point_id, std::int32_t repetition,
                                              const std::string& status)>& visit) const;
  std::uint64_t run_count() const;
  std::uint64_t sample_count() const;

  // The open file's tables; public so that the store's own helpers (results_tables.h) reach them.
  struct Impl;

 private:
  explicit ResultsFile(std::unique_ptr<Impl> impl);
  Impl& impl() const;
  void reopen();
  std::unique_ptr<Impl> impl_;
};

}  // namespace ks
