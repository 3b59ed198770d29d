#include "store/results_file.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/digest.h"
#include "common/huge_pages.h"
#include "kernels/common/cores.h"
#include "store/h5_table.h"
#include "store/space_reserve.h"

namespace ks {

namespace {

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

// How many chunks past the flushed end a killed writer may have written into: rank 0 flushes every
// 256 results or 2 seconds, far less than 64 chunks of any table.
constexpr std::uint64_t kCrashMarginChunks = 64;

constexpr const char* kFormatName = "kernelsweep-results";

// The space reserved past the file's end before every write (store/space_reserve.h): what HDF5 may
// allocate beyond what a batch itself holds (chunks held in the caches, which are written at the
// flush, B-tree nodes, heaps of strings, the metadata blocks), with a wide margin; a batch adds
// four times its own size.
constexpr std::uint64_t kReserveBytes = 32u << 20;

std::uint64_t batch_bytes(const std::vector<StoredRun>& batch) {
  std::uint64_t bytes = 0;
  for (const StoredRun& run : batch)
    bytes += 1024 + run.params_json.size() + run.message.size() + 8 * run.samples_ns.size() + 16 * run.quantiles.size() +
             8 * run.sample_sm_clock_mhz.size();
  return bytes;
}

// Layout 2 on: the strings_check column closes every table.
template <class Record>
h5::CompoundLayout<Record> with_check(std::vector<Field<Record>> columns, std::int64_t layout_version) {
  if (layout_version >= 2) columns.push_back(KS_FIELD(Record, "strings_check", strings_check));
  return h5::CompoundLayout<Record>(std::move(columns));
}

// The RunRecord's own fields (cluster/run_record.h), then what the store adds.
h5::CompoundLayout<StoredRun> run_layout(std::int64_t layout_version) {
  using R = StoredRun;
  std::vector<Field<R>> columns = run_record_fields<R>();
  for (auto column : {KS_FIELD(R, "protocol_digest", cited.protocol_digest),
                      KS_FIELD(R, "environment_digest", cited.environment_digest),
                      KS_FIELD(R, "workload_digest", cited.workload_digest),
                      KS_FIELD(R, "implementation_digest", cited.implementation_digest),
                      KS_FIELD(R, "samples_offset", samples_offset), KS_FIELD(R, "samples_count", samples_count)})
    columns.push_back(std::move(column));
  if (layout_version >= 3) {
    columns.push_back(KS_FIELD(R, "quantiles_offset", quantiles_offset));
    columns.push_back(KS_FIELD(R, "quantiles_count", quantiles_count));
    for (auto column : gpu_state_fields<R>()) columns.push_back(std::move(column));
  }
  if (layout_version >= 4) {
    columns.push_back(KS_FIELD(R, "sample_clocks_offset", sample_clocks_offset));
    columns.push_back(KS_FIELD(R, "sample_clocks_count", sample_clocks_count));
    for (auto column : repetition_fields<R>()) columns.push_back(std::move(column));
    for (auto column : noise_fields<R>()) columns.push_back(std::move(column));
  }
  if (layout_version >= 5)
    for (auto column : collective_fields<R>()) columns.push_back(std::move(column));
  if (layout_version >= 7)
    for (auto column : speed_of_light_fields<R>()) columns.push_back(std::move(column));
  if (layout_version >= 8)
    for (auto column : energy_fields<R>()) columns.push_back(std::move(column));
  return with_check(std::move(columns), layout_version);
}

// /quantiles: numbers only, which the chunks' checksums cover.
const h5::CompoundLayout<Quantile>& quantile_layout() {
  static const h5::CompoundLayout<Quantile> layout(
      {KS_FIELD(Quantile, "quantile", quantile), KS_FIELD(Quantile, "value_ns", value_ns)});
  return layout;
}

// The index of `status` in kStatuses (its value in /run_keys' enum); none for a status not ours.
std::optional<std::uint8_t> status_index(std::string_view status) {
  const auto known = std::find(std::begin(kStatuses), std::end(kStatuses), status);
  if (known == std::end(kStatuses)) return std::nullopt;
  return static_cast<std::uint8_t>(known - std::begin(kStatuses));
}

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

h5::Handle run_key_type(bool in_file) {
  const std::string what = "making the type of /run_keys";
  const hsize_t key_bytes = std::tuple_size_v<PointKey>;
  const hid_t byte = in_file ? H5T_STD_U8LE : H5T_NATIVE_UINT8;
  h5::Handle key = h5::own_datatype(H5Tarray_create2(byte, 1, &key_bytes), what);
  h5::Handle status = h5::own_datatype(H5Tenum_create(byte), what);
  for (std::uint8_t i = 0; i < std::size(kStatuses); ++i)
    h5::check_status(H5Tenum_insert(status.get(), kStatuses[i], &i), what);
  // In the file the fields are packed (37 bytes a row); in memory they are RunKey's.
  const std::size_t status_at = in_file ? key_bytes : offsetof(RunKey, status);
  const std::size_t repetition_at = in_file ? key_bytes + 1 : offsetof(RunKey, repetition);
  h5::Handle type = h5::own_datatype(H5Tcreate(H5T_COMPOUND, in_file ? key_bytes + 1 + 4 : sizeof(RunKey)), what);
  h5::check_status(H5Tinsert(type.get(), "point_key", in_file ? 0 : offsetof(RunKey, point_key), key.get()), what);
  h5::check_status(H5Tinsert(type.get(), "status", status_at, status.get()), what);
  h5::check_status(H5Tinsert(type.get(), "repetition", repetition_at, in_file ? H5T_STD_I32LE : H5T_NATIVE_INT32),
                   what);
  return type;
}

hid_t run_key_memory_type() {
  static const h5::Handle type = run_key_type(false);
  return type.get();
}

hid_t run_key_file_type() {
  static const h5::Handle type = run_key_type(true);
  return type.get();
}

RunKey run_key_of(const StoredRun& run) {
  const auto status = status_index(run.status);
  if (!status) throw ResultsFileError(fmt::format("point {} has unknown status \"{}\"", run.point_id, run.status));
  return {point_key(run.point_id), *status, run.repetition};
}

h5::CompoundLayout<DigestedDocument> document_layout(std::int64_t layout_version) {
  using D = DigestedDocument;
  return with_check<D>({KS_FIELD(D, "digest", digest), KS_FIELD(D, "json", json)}, layout_version);
}

h5::CompoundLayout<RankInfo> rank_layout(std::int64_t layout_version) {
  using K = RankInfo;
  std::vector<Field<K>> columns{KS_FIELD(K, "rank", rank), KS_FIELD(K, "host", host), KS_FIELD(K, "gpu_index", gpu_index),
                                KS_FIELD(K, "gpu_uuid", gpu_uuid), KS_FIELD(K, "pci_bus_id", pci_bus_id),
                                KS_FIELD(K, "gpu_name", gpu_name)};
  if (layout_version >= 7) columns.push_back(KS_FIELD(K, "calibration", calibration));
  return with_check<K>(std::move(columns), layout_version);
}

h5::CompoundLayout<SessionInfo> session_layout(std::int64_t layout_version) {
  using S = SessionInfo;
  return with_check<S>({KS_FIELD(S, "started_at", started_at), KS_FIELD(S, "world_size", world_size),
                        KS_FIELD(S, "host", host), KS_FIELD(S, "command_line", command_line),
                        KS_FIELD(S, "kernelsweep_version", kernelsweep_version), KS_FIELD(S, "git_commit", git_commit)},
                       layout_version);
}

// HDF5 keeps variable-length strings in heaps that no checksum covers (the chunks' Fletcher-32 covers
// only the references to them), so a flipped byte there would read as another string. Each row, and
// the root attributes, therefore carry strings_check: the SHA-256 of their strings, each preceded by
// its length, cut to its first 64 bits.
// Pieces are digested as they come (a file's check reads a million rows: no string is built).
class StringsCheck {
 public:
  void add(std::string_view text) {
    char length[24];
    const auto end = std::to_chars(length, length + sizeof length, text.size()).ptr;
    hash_.update(std::string_view(length, static_cast<std::size_t>(end - length)));
    hash_.update(":");
    hash_.update(text);
  }
  std::uint64_t finish() {
    const auto digest = hash_.finish();
    std::uint64_t check = 0;
    for (std::size_t i = 0; i < 8; ++i) check = check << 8 | digest[i];  // the first 16 hex digits
    return check;
  }

 private:
  Sha256 hash_;
};

std::uint64_t strings_check(const std::vector<std::string_view>& strings) {
  StringsCheck check;
  for (std::string_view text : strings) check.add(text);
  return check.finish();
}

template <class Record>
std::uint64_t strings_check(const Record& record, const h5::CompoundLayout<Record>& layout) {
  thread_local StringsCheck check;
  for_each_field(record, layout.columns(), [&](const Field<Record>&, const auto& value) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) check.add(value);
  });
  return check.finish();
}

// Sets each row's strings_check before it is stored (layout 2 on).
template <class Record>
void put_checks(std::span<Record> rows, const h5::CompoundLayout<Record>& layout, std::int64_t layout_version) {
  if (layout_version < 2) return;
  for (Record& row : rows) row.strings_check = strings_check(row, layout);
}

// Whether a row's strings match their check (files of layout 1 have none).
template <class Record>
bool strings_checked(const Record& record, const h5::CompoundLayout<Record>& layout, std::int64_t layout_version) {
  return layout_version < 2 || record.strings_check == strings_check(record, layout);
}

std::string unchecked_row_message(std::uint64_t row, std::string_view table) {
  return fmt::format("row {} of {}: its strings do not match their checksum (column strings_check)", row, table);
}

// The first row of `rows` whose strings do not match their check, as a message; empty when none.
template <class Record>
std::string first_unchecked_row(const std::vector<Record>& rows, const h5::CompoundLayout<Record>& layout,
                                std::int64_t layout_version, std::string_view table) {
  for (std::size_t row = 0; row < rows.size(); ++row)
    if (!strings_checked(rows[row], layout, layout_version)) return unchecked_row_message(row, table);
  return "";
}

SessionInfo first_session(const RunInfo& info) {
  return {info.started_at, info.world_size, info.host, info.command_line, info.kernelsweep_version,
          info.git_commit};
}

bool is_known_status(const std::string& status) { return status_index(status).has_value(); }

// Between flushes the writer's metadata stays in memory: HDF5 evicting a dirty entry early (the
// dataset's new size, a B-tree node, a heap of strings) would put part of an unflushed append on
// disk, and a writer killed then leaves a file whose /runs counts rows whose strings were never
// written. With evictions off, metadata reaches the file only in H5Fflush. Automatic resizing must
// be off for evictions to be off.
void set_metadata_evictions(hid_t file, bool enabled) {
  H5AC_cache_config_t config{};
  config.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  h5::check_status(H5Fget_mdc_config(file, &config), "reading the metadata cache configuration");
  config.incr_mode = H5C_incr__off;
  config.flash_incr_mode = H5C_flash_incr__off;
  config.decr_mode = H5C_decr__off;
  config.evictions_enabled = enabled;
  h5::check_status(H5Fset_mdc_config(file, &config), "turning metadata cache evictions on or off");
}

void postpone_metadata_writes(hid_t file) { set_metadata_evictions(file, false); }

// A long read of a file open for writing (every row's strings) would leave each heap it read in a
// cache that evicts nothing. Once flushed, nothing in the cache is dirty, and evicting is safe
// until the next write: the read runs with evictions on, in a cache of bounded size.
template <class Read>
void with_evictions_while_reading(hid_t file, bool writable, Read&& read) {
  if (!writable) return read();
  h5::check_status(H5Fflush(file, H5F_SCOPE_GLOBAL), "H5Fflush");
  set_metadata_evictions(file, true);
  try {
    read();
    set_metadata_evictions(file, false);
  } catch (...) {
    set_metadata_evictions(file, false);  // the writes that may follow must stay in the cache until a flush
    throw;
  }
}

// A writer killed inside H5Fflush may have written metadata past the end of allocation (EOA) that
// the superblock records, since the superblock is written last; HDF5 then refuses to read it ("len
// not positive after adjustment for EOA"). Raising the EOA to the file's real size (what
// `h5clear --increment=0` does) makes that metadata readable again; on a sound file it changes nothing.
void repair_end_of_allocation(hid_t file) {
  h5::check_status(H5Fincrement_filesize(file, 0), "raising the end of allocation to the file size");
}

// The file access properties every open uses. The format is capped at HDF5 1.8's: that superblock
// has no "file is open for writing" flag, which a killed writer would leave set (HDF5 1.10 then
// refuses to open the file until `h5clear -s`), and 1.8-era readers open the file too.
h5::Handle file_access(bool file_locking) {
  h5::Handle fapl = h5::own_property_list(H5Pcreate(H5P_FILE_ACCESS), "making file access properties");
  h5::check_status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_EARLIEST, H5F_LIBVER_V18),
                   "capping the file format at HDF5 1.8");
  if (!file_locking) {
    h5::check_status(H5Pset_file_locking(fapl.get(), false, true), "turning file locking off");
  }
  return fapl;
}

// The attribute where, written only when not empty, is checked only then (files without it keep
// the checksum they had).
std::uint64_t root_strings_check(const RunInfo& info) {
  std::vector<std::string_view> strings{info.sweep_name, info.sweep_path, info.sweep_text, info.kernelsweep_version,
                                        info.git_commit, info.started_at, info.ended_at, info.host, info.command_line};
  if (!info.where.empty()) strings.push_back(info.where);
  return strings_check(strings);
}

void write_strings_check(hid_t file, const RunInfo& info) {
  h5::write_int64_attribute(file, "strings_check", std::bit_cast<std::int64_t>(root_strings_check(info)));
}

void write_root_attributes(hid_t file, const RunInfo& info) {
  h5::write_string_attribute(file, "format", kFormatName);
  h5::write_int64_attribute(file, "layout_version", kResultsLayoutVersion);
  h5::write_string_attribute(file, "sweep_name", info.sweep_name);
  h5::write_string_attribute(file, "sweep_path", info.sweep_path);
  h5::write_string_attribute(file, "sweep_text", info.sweep_text);
  h5::write_int64_attribute(file, "plan_size", info.plan_size);
  h5::write_string_attribute(file, "kernelsweep_version", info.kernelsweep_version);
  h5::write_string_attribute(file, "git_commit", info.git_commit);
  h5::write_string_attribute(file, "started_at", info.started_at);
  h5::write_string_attribute(file, "ended_at", info.ended_at);
  h5::write_int64_attribute(file, "world_size", info.world_size);
  h5::write_string_attribute(file, "host", info.host);
  h5::write_string_attribute(file, "command_line", info.command_line);
  h5::write_int64_attribute(file, "shard_index", info.shard_index);
  h5::write_int64_attribute(file, "shard_count", info.shard_count);
  if (!info.where.empty()) h5::write_string_attribute(file, "where", info.where);
  write_strings_check(file, info);
}

RunInfo read_root_attributes(hid_t file) {
  if (h5::read_string_attribute(file, "format") != kFormatName) {
    throw ResultsFileError(std::string("root attribute format is not \"") + kFormatName + "\"");
  }
  RunInfo info;
  info.layout_version = h5::read_int64_attribute(file, "layout_version");
  info.sweep_name = h5::read_string_attribute(file, "sweep_name");
  info.sweep_path = h5::read_string_attribute(file, "sweep_path");
  info.sweep_text = h5::read_string_attribute(file, "sweep_text");
  info.plan_size = h5::read_int64_attribute(file, "plan_size");
  info.kernelsweep_version = h5::read_string_attribute(file, "kernelsweep_version");
  info.git_commit = h5::read_string_attribute(file, "git_commit");
  info.started_at = h5::read_string_attribute(file, "started_at");
  info.ended_at = h5::read_string_attribute(file, "ended_at");
  info.world_size = static_cast<std::int32_t>(h5::read_int64_attribute(file, "world_size"));
  info.host = h5::read_string_attribute(file, "host");
  info.command_line = h5::read_string_attribute(file, "command_line");
  // Files written before the shard attributes existed count as files of the whole plan: their
  // shards were dealt by another rule, which today's plans do not reproduce.
  if (h5::has_attribute(file, "shard_count")) {
    info.shard_index = h5::read_int64_attribute(file, "shard_index");
    info.shard_count = h5::read_int64_attribute(file, "shard_count");
    if (info.shard_count < 1 || info.shard_index < 0 || info.shard_index >= info.shard_count)
      throw ResultsFileError(fmt::format("root attributes shard_index {} and shard_count {} name no shard",
                                         info.shard_index, info.shard_count));
  }
  if (h5::has_attribute(file, "where")) info.where = h5::read_string_attribute(file, "where");
  if (info.layout_version >= 2 &&
      std::bit_cast<std::uint64_t>(h5::read_int64_attribute(file, "strings_check")) != root_strings_check(info))
    throw ResultsFileError("the root attributes' strings do not match their checksum (attribute strings_check)");
  return info;
}

// ended_at, and the root attributes' checksum with it.
void write_ended_at(hid_t file, const std::string& ended_at) {
  RunInfo info = read_root_attributes(file);
  info.ended_at = ended_at;
  h5::write_string_attribute(file, "ended_at", ended_at);
  if (info.layout_version >= 2) write_strings_check(file, info);
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string quoted_line(const std::vector<std::string>& lines, std::size_t index) {
  if (index >= lines.size()) return "no line";
  return lines[index].empty() ? "an empty line" : "`" + lines[index] + "`";
}

}  // namespace

struct ResultsFile::Impl {
  enum class Mode { Create, Append, ReadOnly };

  Impl(std::filesystem::path file_path, h5::Handle file_handle, Mode mode, std::int64_t version)
      : path(std::move(file_path)), writable(mode != Mode::ReadOnly), file(std::move(file_handle)),
        layout_version(version), runs_layout(run_layout(version)), documents_layout(document_layout(version)),
        ranks_layout(rank_layout(version)), sessions_layout(session_layout(version)) {
    if (writable) {  // before the tables are made or cleared: those are writes too
      reserve = SpaceReserve(path);
      reserve.ensure(kReserveBytes);
    }
    const bool fresh = mode == Mode::Create;
    runs.emplace(table(runs_layout, "/runs", fresh, kRunsChunkRows, kRunsOptions));
    samples.emplace(fresh ? h5::Extendable1D::create(id(), "/samples", H5T_IEEE_F64LE, kSamplesChunk, kSamplesOptions)
                          : h5::Extendable1D::open(id(), "/samples", kSamplesOptions));
    environments.emplace(table(documents_layout, "/environments", fresh));
    protocols.emplace(table(documents_layout, "/protocols", fresh));
    ranks.emplace(table(ranks_layout, "/ranks", fresh));
    sessions.emplace(table(sessions_layout, "/sessions", fresh));
    if (version >= 3) quantiles.emplace(table(quantile_layout(), "/quantiles", fresh, kQuantilesChunk, kSamplesOptions));
    if (version >= 4)
      sample_clocks.emplace(fresh ? h5::Extendable1D::create(id(), "/sample_clocks", H5T_IEEE_F64LE, kSamplesChunk, kSamplesOptions)
                                  : h5::Extendable1D::open(id(), "/sample_clocks", kSamplesOptions));
    if (version >= 6)
      run_keys.emplace(fresh ? h5::Extendable1D::create(id(), "/run_keys", run_key_file_type(), kRunKeysChunk, kSamplesOptions)
                             : h5::Extendable1D::open(id(), "/run_keys", kSamplesOptions));
    if (fresh) h5::write_string_attribute(samples->id(), "units", "ns");
    if (fresh && sample_clocks) h5::write_string_attribute(sample_clocks->id(), "units", "MHz");
    if (writable) postpone_metadata_writes(id());
    if (mode == Mode::Append) {
      clear_past_ends();
      complete_run_keys();
    }
    if (writable) remember_stored_keys();
  }

  // The file may come from a killed writer: start appending from exactly its flushed state.
  void clear_past_ends() {
    runs->clear_past_end(kCrashMarginChunks);
    samples->clear_past_end(kCrashMarginChunks);
    if (quantiles) quantiles->clear_past_end(kCrashMarginChunks);
    if (sample_clocks) sample_clocks->clear_past_end(kCrashMarginChunks);
    if (run_keys) run_keys->clear_past_end(kCrashMarginChunks);
    environments->clear_past_end(kCrashMarginChunks);
    protocols->clear_past_end(kCrashMarginChunks);
    ranks->clear_past_end(kCrashMarginChunks);
    sessions->clear_past_end(kCrashMarginChunks);
  }

  // /run_keys is appended right after /runs: a writer killed or refused between the two leaves it
  // short, and its missing rows are made again from /runs here, so that readers find it whole.
  void complete_run_keys() {
    if (!run_keys || run_keys->size() == runs->size()) return;
    run_keys->shrink_to(runs->size());
    const std::uint64_t first = run_keys->size();
    std::vector<RunKey> keys;
    keys.reserve(runs->size() - first);
    runs->scan(runs_layout.subset({"point_id", "status", "repetition"}), first, runs->size() - first,
               [&](std::uint64_t, const StoredRun& run) { keys.push_back(run_key_of(run)); });
    run_keys->append(run_key_memory_type(), keys.size(), keys.data());
  }

  // Whether /run_keys describes every row of /runs (read-only, a short one is read around).
  bool run_keys_whole() const { return run_keys && run_keys->size() == runs->size(); }

  hid_t id() const { return file.get(); }

  // A table made (fresh) or opened; the small ones (documents, ranks, sessions) take the defaults.
  template <class Record>
  h5::Table<Record> table(const h5::CompoundLayout<Record>& layout, const std::string& name, bool fresh,
                          hsize_t chunk_rows = kSmallTableChunkRows,
                          const h5::Extendable1D::Options& options = kSmallTableOptions) {
    return fresh ? h5::Table<Record>::create(id(), name, layout, chunk_rows, options)
                 : h5::Table<Record>::open(id(), name, options);
  }

  // The keys that make puts idempotent across sessions: digests and rank rows already stored.
  void remember_stored_keys() {
    for (const auto& document : environments->read_all(documents_layout)) environment_digests.insert(document.digest);
    for (const auto& document : protocols->read_all(documents_layout)) protocol_digests.insert(document.digest);
    stored_ranks = ranks->read_all(ranks_layout);
  }

  void require_writable(std::string_view action) const {
    if (!writable) throw ResultsFileError(std::string("cannot ") + std::string(action) + ": the file was opened read-only");
    if (!file.valid()) throw ResultsFileError(std::string("cannot ") + std::string(action) + ": the file is closed");
  }

  void put_document(h5::Table<DigestedDocument>& table, std::set<std::string>& digests, const std::string& digest,
                    const std::string& json_text) {
    if (digest.empty()) throw ResultsFileError("a document's digest is empty");
    if (digests.contains(digest)) return;
    reserve.ensure(kReserveBytes + 4 * json_text.size());
    DigestedDocument document{digest, json_text};
    put_checks(std::span(&document, 1), documents_layout, layout_version);
    table.append(std::span(&document, 1), documents_layout);
    digests.insert(digest);
  }

  // Datasets first, then the file: HDF5 keeps a file open while any of its objects is.
  void close() {
    runs.reset();
    run_keys.reset();
    samples.reset();
    sample_clocks.reset();
    quantiles.reset();
    environments.reset();
    protocols.reset();
    ranks.reset();
    sessions.reset();
    if (!file.reset()) h5::fail("closing the file");
  }

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
  std::optional<h5::Table<Quantile>> quantiles;  // layout 3 on
  std::optional<h5::Table<DigestedDocument>> environments, protocols;
  std::optional<h5::Table<RankInfo>> ranks;
  std::optional<h5::Table<SessionInfo>> sessions;
  std::set<std::string> environment_digests, protocol_digests;
  std::vector<RankInfo> stored_ranks;
};

namespace {

// Runs `body` with HDF5's stderr printing off, and prefixes any failure with the file and the action.
template <class Body>
auto guarded(const std::filesystem::path& path, std::string_view action, Body&& body) -> decltype(body()) {
  h5::QuietErrors quiet;
  try {
    return body();
  } catch (const StorageFullError& error) {
    throw StorageFullError("results file " + path.string() + ": " + std::string(action) + ": " + error.what());
  } catch (const ResultsFileError& error) {
    throw ResultsFileError("results file " + path.string() + ": " + std::string(action) + ": " + error.what());
  }
}

// guarded() for what writes: a write that fails leaves the file for the next open to check.
template <class Body>
void writing(ResultsFile::Impl& self, std::string_view action, Body&& body) {
  try {
    guarded(self.path, action, std::forward<Body>(body));
  } catch (...) {
    self.write_failed = true;
    throw;
  }
}

}  // namespace

ResultsFile::ResultsFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ResultsFile::ResultsFile(ResultsFile&&) noexcept = default;
ResultsFile& ResultsFile::operator=(ResultsFile&&) noexcept = default;
ResultsFile::~ResultsFile() = default;

ResultsFile::Impl& ResultsFile::impl() const {
  if (!impl_) throw ResultsFileError("the results file was finished (closed) already");
  return *impl_;
}

const std::filesystem::path& ResultsFile::path() const { return impl().path; }

ResultsFile ResultsFile::create(const std::filesystem::path& path, const RunInfo& info) {
  return create(path, info, {first_session(info)});
}

ResultsFile ResultsFile::create(const std::filesystem::path& path, const RunInfo& info,
                                const std::vector<SessionInfo>& sessions) {
  if (std::filesystem::exists(path)) {
    throw ResultsFileError("refusing to create results file " + path.string() + ": it already exists");
  }
  return guarded(path, "creating it", [&] {
    h5::Handle fapl = file_access(true);
    // H5F_ACC_EXCL as well: a file that appears between the check above and here is not replaced either.
    h5::Handle file =
        h5::own_file(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()), "creating the HDF5 file");
    try {
      write_root_attributes(file.get(), info);
      auto impl = std::make_unique<Impl>(path, std::move(file), Impl::Mode::Create, kResultsLayoutVersion);
      std::vector<SessionInfo> rows = sessions;
      put_checks(std::span(rows), impl->sessions_layout, impl->layout_version);
      impl->sessions->append(std::span(rows), impl->sessions_layout);
      // Until its first flush the file on disk is a bare superblock that no reader opens: make the
      // empty layout durable now, so a writer killed before its first batch leaves a resumable file.
      h5::check_status(H5Fflush(impl->id(), H5F_SCOPE_GLOBAL), "flushing the new file");
      return ResultsFile(std::move(impl));
    } catch (const ResultsFileError&) {
      // Nothing was stored in it: a half-made file would only stand in the way of the next attempt.
      file = h5::Handle();
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
      throw;
    }
  });
}

namespace {

// --- reading a file that may be damaged ------------------------------------------------------------
//
// HDF5 trusts what it reads: on a damaged file (a flipped byte, a truncation, a writer killed inside
// H5Fflush) it can crash the process or loop forever, and no error is raised that could be caught.
// So before any command opens a results file, a child process reads all of it (the root attributes,
// every table, every sample) and checks what the rows say against each other; the command opens the
// file only when the child ends well within its deadline. A crash, a hang or a failed check becomes
// a one-line refusal that says what is wrong and what to do.

// The first table whose type, as the file describes it, is not the one its layout writes: an object
// header carries no checksum in this format, and a flipped bit in a type's description (a member's
// size, sign or offset) would read every row as other numbers. Empty when all are as written.
std::string first_retyped_table(const ResultsFile::Impl& impl) {
  const auto retyped = [](std::string_view table) {
    return fmt::format("the column types of {} are not those kernelsweep writes (the dataset's description of them "
                       "is damaged)", table);
  };
  if (!impl.runs->stored_as(impl.runs_layout)) return retyped("/runs");
  if (!impl.samples->stored_as(H5T_IEEE_F64LE)) return retyped("/samples");
  if (impl.quantiles && !impl.quantiles->stored_as(quantile_layout())) return retyped("/quantiles");
  if (impl.sample_clocks && !impl.sample_clocks->stored_as(H5T_IEEE_F64LE)) return retyped("/sample_clocks");
  if (impl.run_keys && !impl.run_keys->stored_as(run_key_file_type())) return retyped("/run_keys");
  if (!impl.environments->stored_as(impl.documents_layout)) return retyped("/environments");
  if (!impl.protocols->stored_as(impl.documents_layout)) return retyped("/protocols");
  if (!impl.ranks->stored_as(impl.ranks_layout)) return retyped("/ranks");
  if (!impl.sessions->stored_as(impl.sessions_layout)) return retyped("/sessions");
  return "";
}

// Reads one of `slices` parts of the file and checks it; what is wrong, or empty. Runs in a child:
// slice k reads the k-th part of the rows of /runs and of /samples, slice 0 the small tables too.
std::string read_slice(const std::filesystem::path& path, bool as_writer, std::uint64_t slice, std::uint64_t slices) {
  h5::QuietErrors quiet;
  try {
    h5::Handle fapl = file_access(false);
    h5::Handle file = h5::own_file(H5Fopen(path.c_str(), as_writer ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl.get()),
                                   "opening the HDF5 file");
    if (as_writer) repair_end_of_allocation(file.get());  // as open_for_append will
    const std::int64_t version = read_root_attributes(file.get()).layout_version;
    ResultsFile::Impl impl(path, std::move(file), ResultsFile::Impl::Mode::ReadOnly, version);
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
      } else if (!is_known_status(run.status)) {
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
        problem = fmt::format("row {} of /run_keys does not say what row {} of /runs says (its point, status or "
                              "repetition differ)", row, row);
      }
    });
    if (!problem.empty()) return problem;
    constexpr std::uint64_t kBlock = 1u << 22;
    std::vector<double> block;
    const auto [first_sample, end_sample] = part(samples);
    for (std::uint64_t first = first_sample; first < end_sample; first += kBlock) {
      block.resize(std::min(kBlock, end_sample - first));
      impl.samples->read(H5T_NATIVE_DOUBLE, first, block.size(), block.data());
    }
    if (slice != 0) return "";
    // Every chunk of /quantiles and /sample_clocks read once: a damaged one fails its checksum here.
    if (impl.quantiles) impl.quantiles->scan(quantile_layout(), [](std::uint64_t, const Quantile&) {});
    for (std::uint64_t first = 0; first < clocks; first += kBlock) {
      block.resize(std::min(kBlock, clocks - first));
      impl.sample_clocks->read(H5T_NATIVE_DOUBLE, first, block.size(), block.data());
    }
    for (const char* name : {"/environments", "/protocols"}) {
      const auto& table = std::string_view(name) == "/environments" ? impl.environments : impl.protocols;
      if (auto what = first_unchecked_row(table->read_all(impl.documents_layout), impl.documents_layout, version, name);
          !what.empty())
        return what;
    }
    if (auto what = first_unchecked_row(impl.ranks->read_all(impl.ranks_layout), impl.ranks_layout, version, "/ranks");
        !what.empty())
      return what;
    return first_unchecked_row(impl.sessions->read_all(impl.sessions_layout), impl.sessions_layout, version,
                               "/sessions");
  } catch (const std::exception& error) {
    return error.what();
  }
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
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
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
  struct stat status{};
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
  struct stat status{};
  if (read.empty() || ::stat(path.c_str(), &status) != 0 || mark_of(status) != read) return;
  const auto modified = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::seconds(status.st_mtim.tv_sec)));
  if (std::chrono::system_clock::now() - modified < kSettled) return;
  set_mark(path, as_writer, read);
}

// A writer that closes the file after every one of its writes succeeded leaves it as sound as it
// found it (checked when opened, or made new): it marks both ways of opening it as checked, so that
// the status or resume after a sweep does not read a million rows again. No other kernelsweep writes
// to the file while the writer lock is held, and the next writer takes the marks off before its first
// write (forget_checked). What remains is a change by another program just after the mark within the
// same tick of the filesystem's clock, which would leave the time as it was: the writer waits out one
// tick first (the kernel's clock moves in steps of a few milliseconds; a filesystem that keeps whole
// seconds, whose times have no nanoseconds, a second), and marks the file only if nothing changed.
void mark_written(const std::filesystem::path& path) {
  struct stat closed{};
  if (::stat(path.c_str(), &closed) != 0) return;
  const bool whole_seconds = closed.st_mtim.tv_nsec == 0;
  std::this_thread::sleep_for(whole_seconds ? std::chrono::milliseconds(1050) : std::chrono::milliseconds(20));
  const std::string mark = checked_mark(path);
  if (mark != mark_of(closed)) return;
  for (bool as_writer : {false, true}) set_mark(path, as_writer, mark);
}

// Takes the marks off before a writer's first write: a writer killed within the second of its
// predecessor's mark, on a filesystem of whole-second times, leaves no mark that still matches.
void forget_checked(const std::filesystem::path& path) {
  for (bool as_writer : {false, true}) (void)::removexattr(path.c_str(), checked_attribute(as_writer));
}

// The file opened to write (with HDF5's file locking, beside the writer lock).
h5::Handle open_to_write(const std::filesystem::path& path) {
  h5::Handle fapl = file_access(true);
  return h5::own_file(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()), "opening the HDF5 file");
}

// Reads the whole file in child processes first (several on a file large enough, each a slice),
// unless it is marked as found sound as it is now; throws DamagedResultsFile when reading fails in
// any way.
void check_readable(const std::filesystem::path& path, bool as_writer) {
  if (!std::filesystem::exists(path)) return;  // opening says so, with HDF5's words
  if (marked_checked(path, as_writer)) return;
  const std::string read = checked_mark(path);
  const std::uint64_t slices = reading_slices(path);
  std::vector<SliceReader> readers;
  for (std::uint64_t slice = 0; slice < slices; ++slice) readers.push_back(start_slice_reader(path, as_writer, slice, slices));
  const bool in_time = collect_until_closed(readers, std::chrono::steady_clock::now() + reading_deadline(path));
  std::string what;
  for (SliceReader& reader : readers) {
    if (reader.pipe >= 0) ::close(reader.pipe);
    if (!in_time) ::kill(reader.pid, SIGKILL);
    int status = 0;
    while (::waitpid(reader.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (what.empty()) what = child_outcome(status, reader.written);
  }
  if (!in_time) refuse_damaged(path, fmt::format("reading it did not end within {} s", reading_deadline(path).count()));
  if (!what.empty()) refuse_damaged(path, what);
  mark_checked(path, as_writer, read);
}

}  // namespace

ResultsFile ResultsFile::open_for_append(const std::filesystem::path& path) {
  check_readable(path, true);
  forget_checked(path);
  return guarded(path, "opening it to append", [&] {
    h5::Handle file = open_to_write(path);
    repair_end_of_allocation(file.get());
    const std::int64_t version = read_root_attributes(file.get()).layout_version;  // refuses a file not ours first
    return ResultsFile(std::make_unique<Impl>(path, std::move(file), Impl::Mode::Append, version));
  });
}

ResultsFile ResultsFile::open_read_only(const std::filesystem::path& path) {
  check_readable(path, false);
  return guarded(path, "opening it to read", [&] {
    h5::Handle fapl = file_access(false);
    h5::Handle file = h5::own_file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), "opening the HDF5 file");
    const std::int64_t version = read_root_attributes(file.get()).layout_version;
    return ResultsFile(std::make_unique<Impl>(path, std::move(file), Impl::Mode::ReadOnly, version));
  });
}

void ResultsFile::append(std::vector<StoredRun>& batch) {
  Impl& self = impl();
  writing(self, "appending " + std::to_string(batch.size()) + " runs", [&] {
    self.require_writable("append runs");
    self.reserve.ensure(kReserveBytes + 4 * batch_bytes(batch));
    std::vector<double> samples, sample_clocks;
    std::vector<Quantile> quantiles;
    for (StoredRun& record : batch) {
      if (!is_known_status(record.status)) {
        throw ResultsFileError("point " + record.point_id + " has unknown status \"" + record.status + "\"");
      }
      record.samples_offset = self.samples->size() + samples.size();
      record.samples_count = record.samples_ns.size();
      samples.insert(samples.end(), record.samples_ns.begin(), record.samples_ns.end());
      if (self.quantiles) {
        record.quantiles_offset = self.quantiles->size() + quantiles.size();
        record.quantiles_count = record.quantiles.size();
        quantiles.insert(quantiles.end(), record.quantiles.begin(), record.quantiles.end());
      }
      if (self.sample_clocks) {
        // One clock per sample, or none: a row never points at clocks of other samples.
        const bool read = record.sample_sm_clock_mhz.size() == record.samples_ns.size();
        record.sample_clocks_offset = self.sample_clocks->size() + sample_clocks.size();
        record.sample_clocks_count = read ? record.sample_sm_clock_mhz.size() : 0;
        if (read) sample_clocks.insert(sample_clocks.end(), record.sample_sm_clock_mhz.begin(), record.sample_sm_clock_mhz.end());
      }
    }
    // Samples, clocks and quantiles before rows: a crash between them leaves unreferenced values,
    // never a row pointing past the end of /samples, /sample_clocks or /quantiles.
    self.samples->append(H5T_NATIVE_DOUBLE, samples.size(), samples.data());
    if (!sample_clocks.empty()) self.sample_clocks->append(H5T_NATIVE_DOUBLE, sample_clocks.size(), sample_clocks.data());
    if (!quantiles.empty()) self.quantiles->append(std::span(quantiles), quantile_layout());
    put_checks(std::span(batch), self.runs_layout, self.layout_version);
    self.runs->append(std::span(batch), self.runs_layout);
    if (self.run_keys) {
      std::vector<RunKey> keys;
      keys.reserve(batch.size());
      for (const StoredRun& record : batch) keys.push_back(run_key_of(record));
      self.run_keys->append(run_key_memory_type(), keys.size(), keys.data());
    }
  });
}

void ResultsFile::put_environment(const std::string& digest, const std::string& json_text) {
  Impl& self = impl();
  writing(self, "storing environment " + digest, [&] {
    self.require_writable("store an environment");
    self.put_document(*self.environments, self.environment_digests, digest, json_text);
  });
}

void ResultsFile::put_protocol(const std::string& digest, const std::string& json_text) {
  Impl& self = impl();
  writing(self, "storing protocol " + digest, [&] {
    self.require_writable("store a protocol");
    self.put_document(*self.protocols, self.protocol_digests, digest, json_text);
  });
}

void ResultsFile::put_rank(const RankInfo& rank) {
  Impl& self = impl();
  writing(self, "storing rank " + std::to_string(rank.rank), [&] {
    self.require_writable("store a rank");
    if (std::find(self.stored_ranks.begin(), self.stored_ranks.end(), rank) != self.stored_ranks.end()) return;
    self.reserve.ensure(kReserveBytes);
    RankInfo row = rank;
    put_checks(std::span(&row, 1), self.ranks_layout, self.layout_version);
    self.ranks->append(std::span(&row, 1), self.ranks_layout);
    self.stored_ranks.push_back(rank);
  });
}

void ResultsFile::add_session(const SessionInfo& session) {
  Impl& self = impl();
  writing(self, "recording a session", [&] {
    self.require_writable("record a session");
    self.reserve.ensure(kReserveBytes);
    write_ended_at(self.id(), "");
    SessionInfo row = session;
    put_checks(std::span(&row, 1), self.sessions_layout, self.layout_version);
    self.sessions->append(std::span(&row, 1), self.sessions_layout);
  });
}

void ResultsFile::flush() {
  Impl& self = impl();
  writing(self, "flushing", [&] {
    self.require_writable("flush");
    self.reserve.ensure(kReserveBytes);
    h5::check_status(H5Fflush(self.id(), H5F_SCOPE_GLOBAL), "H5Fflush");
    if (metadata_cache_bytes() > kMetadataCacheBytes) reopen();
  });
}

std::size_t ResultsFile::metadata_cache_bytes() const {
  std::size_t max_bytes = 0, min_clean_bytes = 0, cached_bytes = 0;
  int entries = 0;
  h5::check_status(H5Fget_mdc_size(impl().id(), &max_bytes, &min_clean_bytes, &cached_bytes, &entries),
                   "reading the metadata cache's size");
  return cached_bytes;
}

// Right after a flush nothing in the metadata cache is dirty: closing the file drops the cache and
// loses nothing, and the file opened again appends from where it was.
void ResultsFile::reopen() {
  const std::filesystem::path path = impl_->path;
  const std::int64_t version = impl_->layout_version;
  const bool write_failed = impl_->write_failed;
  impl_->close();
  impl_.reset();
  H5garbage_collect();  // HDF5 keeps the blocks it freed in lists of its own, for reuse
  impl_ = std::make_unique<Impl>(path, open_to_write(path), Impl::Mode::Append, version);
  impl_->write_failed = write_failed;
}

void ResultsFile::finish(const std::string& ended_at) {
  Impl& self = impl();
  writing(self, "finishing", [&] {
    self.require_writable("finish");
    write_ended_at(self.id(), ended_at);
    self.close();
  });
  const std::filesystem::path path = self.path;
  const bool sound = !self.write_failed;
  impl_.reset();  // the space reserve gives its blocks back: the file's last change
  if (sound) mark_written(path);
}

RunInfo ResultsFile::read_info() const {
  Impl& self = impl();
  return guarded(self.path, "reading the root attributes", [&] { return read_root_attributes(self.id()); });
}

std::vector<StoredRun> ResultsFile::read_runs() const {
  Impl& self = impl();
  return guarded(self.path, "reading /runs", [&] { return self.runs->read_all(self.runs_layout); });
}

std::vector<StoredRun> ResultsFile::read_runs(std::uint64_t first, std::uint64_t count) const {
  Impl& self = impl();
  return guarded(self.path, "reading /runs", [&] {
    if (first > self.runs->size() || count > self.runs->size() - first) {
      throw ResultsFileError("rows " + std::to_string(first) + " to " + std::to_string(first + count) +
                             " asked, the table has " + std::to_string(self.runs->size()));
    }
    return self.runs->read(self.runs_layout, first, count);
  });
}

std::vector<double> ResultsFile::read_samples(std::uint64_t offset, std::uint64_t count) const {
  Impl& self = impl();
  return guarded(self.path, "reading /samples", [&] {
    std::vector<double> values(count);
    self.samples->read(H5T_NATIVE_DOUBLE, offset, count, values.data());
    return values;
  });
}

std::vector<double> ResultsFile::read_sample_clocks(std::uint64_t offset, std::uint64_t count) const {
  Impl& self = impl();
  if (!self.sample_clocks || count == 0) return {};
  return guarded(self.path, "reading /sample_clocks", [&] {
    std::vector<double> values(count);
    self.sample_clocks->read(H5T_NATIVE_DOUBLE, offset, count, values.data());
    return values;
  });
}

std::vector<Quantile> ResultsFile::read_quantiles(std::uint64_t offset, std::uint64_t count) const {
  Impl& self = impl();
  if (!self.quantiles) return {};
  return guarded(self.path, "reading /quantiles", [&] { return self.quantiles->read(quantile_layout(), offset, count); });
}

std::vector<DigestedDocument> ResultsFile::read_environments() const {
  Impl& self = impl();
  return guarded(self.path, "reading /environments", [&] { return self.environments->read_all(self.documents_layout); });
}

std::vector<DigestedDocument> ResultsFile::read_protocols() const {
  Impl& self = impl();
  return guarded(self.path, "reading /protocols", [&] { return self.protocols->read_all(self.documents_layout); });
}

std::vector<RankInfo> ResultsFile::read_ranks() const {
  Impl& self = impl();
  return guarded(self.path, "reading /ranks", [&] { return self.ranks->read_all(self.ranks_layout); });
}

std::vector<SessionInfo> ResultsFile::read_sessions() const {
  Impl& self = impl();
  return guarded(self.path, "reading /sessions", [&] { return self.sessions->read_all(self.sessions_layout); });
}

void ResultsFile::scan_statuses(const std::function<void(std::uint64_t row, const std::string& point_id,
                                                         std::int32_t repetition, const std::string& status)>& visit) const {
  Impl& self = impl();
  guarded(self.path, "reading the statuses in /runs", [&] {
    // A few columns only: partial compound reads skip the other fields (and their strings); the rows
    // pass through one reused block, so the table never sits in memory.
    std::vector<std::string_view> columns{"point_id", "status"};
    if (self.layout_version >= 4) columns.push_back("repetition");
    with_evictions_while_reading(self.id(), self.writable, [&] {
      self.runs->scan(self.runs_layout.subset(columns), [&](std::uint64_t row, const StoredRun& run) {
        visit(row, run.point_id, run.repetition, run.status);
      });
    });
  });
}

void ResultsFile::scan_point_keys(const std::function<void(std::uint64_t row, const PointKey& key, std::size_t status)>& visit) const {
  Impl& self = impl();
  if (!self.run_keys_whole()) {
    scan_statuses([&](std::uint64_t row, const std::string& point_id, std::int32_t repetition, const std::string& status) {
      const auto index = status_index(status);
      if (!index)
        throw ResultsFileError(fmt::format("row {} of /runs has status \"{}\", which is none of kernelsweep's", row, status));
      visit(row, repetition_key(point_key(point_id), repetition), *index);
    });
    return;
  }
  guarded(self.path, "reading /run_keys", [&] {
    with_evictions_while_reading(self.id(), self.writable, [&] {
      const std::uint64_t rows = self.run_keys->size();
      std::vector<RunKey> block(std::min<std::uint64_t>(kRunKeysChunk, rows));
      for (std::uint64_t first = 0; first < rows; first += block.size()) {
        const std::uint64_t count = std::min<std::uint64_t>(block.size(), rows - first);
        self.run_keys->read(run_key_memory_type(), first, count, block.data());
        for (std::uint64_t i = 0; i < count; ++i) {
          const RunKey& key = block[i];
          if (key.status >= std::size(kStatuses))
            throw ResultsFileError(fmt::format("row {} of /run_keys has status code {}, which is none of kernelsweep's",
                                               first + i, key.status));
          visit(first + i, repetition_key(key.point_key, key.repetition), key.status);
        }
      }
    });
  });
}

std::vector<PointStatus> ResultsFile::point_statuses() const {
  // Each row as (key, row, status), sorted by key: a point's rows side by side, in row order.
  struct Row {
    PointKey key;
    std::uint64_t row = 0;
    std::uint8_t status = 0;  // index into kStatuses
  };
  LargeVector<Row> rows;
  rows.reserve(run_count());
  scan_point_keys([&](std::uint64_t row, const PointKey& key, std::size_t status) {
    rows.push_back({key, row, static_cast<std::uint8_t>(status)});
  });
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.key != b.key ? PointKeyLess()(a.key, b.key) : a.row < b.row;
  });
  std::vector<PointStatus> points;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i == 0 || rows[i].key != rows[i - 1].key) points.push_back({rows[i].key, "", rows[i].row, 0, false});
    PointStatus& point = points.back();
    point.status = kStatuses[rows[i].status];
    point.latest_row = rows[i].row;
    point.ever_passed = point.ever_passed || point.status == "passed";
  }
  return points;
}

std::uint64_t ResultsFile::run_count() const { return impl().runs->size(); }
std::uint64_t ResultsFile::sample_count() const { return impl().samples->size(); }

std::string describe_sweep_text_change(std::string_view stored, std::string_view given) {
  if (stored == given) return "";
  return describe_first_differing_line(stored, given, "the results file's sweep", "the sweep file") + " (" +
         std::to_string(split_lines(stored).size()) + " lines stored, " + std::to_string(split_lines(given).size()) +
         " given)";
}

std::string describe_first_differing_line(std::string_view first_text, std::string_view second_text,
                                          std::string_view first_label, std::string_view second_label) {
  if (first_text == second_text) return "";
  const std::vector<std::string> first_lines = split_lines(first_text), second_lines = split_lines(second_text);
  std::size_t line = 0;
  while (line < first_lines.size() && line < second_lines.size() && first_lines[line] == second_lines[line]) ++line;
  return "line " + std::to_string(line + 1) + ": " + std::string(first_label) + " has " +
         quoted_line(first_lines, line) + ", " + std::string(second_label) + " has " + quoted_line(second_lines, line);
}

}  // namespace ks
