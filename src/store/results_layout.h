#pragma once
// The schema of the results file in one place (docs/hdf5-layout.md describes it): the layout
// versions, the root attributes, each table's columns as each layout has them, and the datasets'
// chunking. The writer, the readers and the damage check make their tables from here alone, so that a
// file of an older layout is read, and appended to, with the columns it was written with.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/point_id_set.h"
#include "store/h5_table.h"
#include "store/run_labels.h"
#include "store/stored_run.h"

namespace ks {

// Bumped when the layout changes in a way a reader must know; stored as the root attribute layout_version.
// 2: every table and the root attributes carry strings_check, a checksum of their strings. Files of
// layout 1 are read (and resumed) without it.
// 3: /quantiles holds each timed run's quantiles (those its protocol asks for), which /runs points at
// with quantiles_offset and quantiles_count; /runs holds the GPU's state around each measurement.
// Files of layout 2 are read (and resumed) without them.
// 4: /sample_clocks holds each sample's SM clock where the worker read it, which /runs points at
// with sample_clocks_offset and sample_clocks_count; /runs holds which repetition of its point each
// run is, how a cold measurement ended (noise, noise_goal_met, samples_dropped) and the SM clock its
// samples ran at (sample_sm_clock_min_mhz, sample_sm_clock_median_mhz). Files of layout 3 are read
// (and resumed) without them.
// 5: /runs holds a collective's bus bandwidth and the count of wrong elements its check found
// (bus_gbps, wrong_elements; NaN and -1 for other kernels). Files of layout 4 are read (and resumed)
// without them.
// 6: /run_keys, beside /runs, holds each row's point key, status and repetition in fixed-size fields
// (what status and a resume read). Files of layout 5 are read (and resumed) through /runs' columns.
// 7: /runs holds each point's speed of light (bandwidth_pct, compute_pct, sol_pct, flags), /ranks
// each rank's calibration (JSON). Files of layout 6 are read (and resumed) without them.
// 8: /runs holds each point's energy (joules_per_call, gflops_per_joule, energy_window_s; NaN where
// none was measured). Files of layout 7 are read (and resumed) without them.
inline constexpr std::int64_t kResultsLayoutVersion = 8;

// The root group's attributes: what was swept, and the session that created the file.
struct RunInfo {
  std::string sweep_name;
  std::string sweep_path;
  std::string sweep_text;  // the sweep file's exact text: resume compares it, `status` re-plans from it
  std::int64_t plan_size = 0;
  std::string kernelsweep_version;
  std::string git_commit;
  std::string started_at;  // UTC, ISO 8601 with milliseconds
  std::string ended_at;    // empty while a session is running, or after one was killed
  std::int32_t world_size = 1;
  std::string host;          // rank 0's hostname
  std::string command_line;  // rank 0's argv, joined by spaces
  // The part of the plan the file holds: shard shard_index of shard_count (--shard i/N); 0 of 1 for
  // the whole plan (a run without --shard, a merged file).
  std::int64_t shard_index = 0;
  std::int64_t shard_count = 1;
  // The --where expression that selected the file's points of the plan (of the shard); empty for all.
  std::string where;
  // What the team named the run by (`run --label`, `import --label`): the root attribute labels, a
  // JSON object of strings, written only where there are some.
  RunLabels labels;
  std::int64_t layout_version = kResultsLayoutVersion;  // read back from the file; create() writes the constant
};

// One row of /sessions: the session that created the file, then one per --resume.
struct SessionInfo {
  std::string started_at;
  std::int32_t world_size = 1;
  std::string host;
  std::string command_line;
  std::string kernelsweep_version;
  std::string git_commit;
  std::uint64_t strings_check = 0;  // set when stored, checked when read
};

// One row of /ranks: where a rank ran. gpu_index is -1 and the GPU strings empty on a CPU rank.
struct RankInfo {
  std::int32_t rank = 0;
  std::string host;
  std::int32_t gpu_index = -1;
  std::string gpu_uuid;
  std::string pci_bus_id;
  std::string gpu_name;
  // What the rank's devices measurably do (calibration/calibration.h, as JSON; layout 7 on): empty
  // where it was not calibrated (`run --calibrate off`, an older file).
  std::string calibration;
  std::uint64_t strings_check = 0;  // set when stored, checked when read (strings_check.h)
  bool operator==(const RankInfo& other) const {
    return rank == other.rank && host == other.host && gpu_index == other.gpu_index && gpu_uuid == other.gpu_uuid &&
           pci_bus_id == other.pci_bus_id && gpu_name == other.gpu_name && calibration == other.calibration;
  }
};

// One row of /environments or /protocols: a document's canonical JSON, keyed by its content digest.
struct DigestedDocument {
  std::string digest;  // "sha256:…"
  std::string json;
  std::uint64_t strings_check = 0;  // set when stored, checked when read
};

// Chunk sizes: /runs rows are about 370 bytes on disk, so 1024 rows make a ~380 KiB chunk; 64 Ki
// samples make a 512 KiB chunk. The caches hold a few chunks, so the chunk being filled stays in
// memory between small appends and is written once per flush.
constexpr hsize_t kRunsChunkRows = 1024;
constexpr hsize_t kSamplesChunk = 64 * 1024;
constexpr hsize_t kSmallTableChunkRows = 16;
constexpr hsize_t kQuantilesChunk = 16 * 1024;
// 37 bytes a row: a 148 KiB chunk. The chunk being filled is written again at every flush (every 256
// results), so a larger one costs the run more than it saves the readers.
constexpr hsize_t kRunKeysChunk = 4 * 1024;
constexpr h5::Extendable1D::Options kRunsOptions{.chunk_cache_bytes = 4u << 20, .conversion_buffer_bytes = 256u << 10};
constexpr h5::Extendable1D::Options kSamplesOptions{.chunk_cache_bytes = 4u << 20, .conversion_buffer_bytes = 0};
constexpr h5::Extendable1D::Options kSmallTableOptions{.chunk_cache_bytes = 1u << 20,
                                                       .conversion_buffer_bytes = 16u << 10};

// The columns of each table in a file of `layout_version`.
h5::CompoundLayout<StoredRun> run_layout(std::int64_t layout_version);
// /quantiles: numbers only, which the chunks' checksums cover.
const h5::CompoundLayout<Quantile>& quantile_layout();
h5::CompoundLayout<DigestedDocument> document_layout(std::int64_t layout_version);
h5::CompoundLayout<RankInfo> rank_layout(std::int64_t layout_version);
h5::CompoundLayout<SessionInfo> session_layout(std::int64_t layout_version);

// The index of `status` in kStatuses (its value in /run_keys' enum); none for a status not ours.
std::optional<std::uint8_t> status_index(std::string_view status);

// /run_keys (layout 6 on): row i holds, in fixed-size fields, what status and a resume need of row i
// of /runs: its point's key (the 32 bytes of its point_id: common/point_id_set.h), its status and
// its repetition. Reading them takes no string from HDF5's global heap: a million rows are read in
// 0.07-0.12 s, where the same columns of /runs took 0.95-1.2 s.
struct RunKey {
  PointKey point_key{};
  std::uint8_t status = 0;  // index into kStatuses; an HDF5 enum of their names in the file
  std::int32_t repetition = 0;

  bool operator==(const RunKey&) const = default;
};

// /run_keys' types: its rows in memory (RunKey's fields) and in the file (packed, 37 bytes).
hid_t run_key_memory_type();
hid_t run_key_file_type();
// A row's key; throws ResultsFileError for a status not ours.
RunKey run_key_of(const StoredRun& run);

// The root attributes. Reading refuses a file that is not a results file (its attribute format) and
// root attributes whose strings do not match their checksum.
void write_root_attributes(hid_t file, const RunInfo& info);
RunInfo read_root_attributes(hid_t file);
// ended_at, and the root attributes' checksum with it.
void write_ended_at(hid_t file, const std::string& ended_at);

}  // namespace ks
