// The open file's tables (results_tables.h): making or opening them, clearing what a killed writer
// left, and the ResultsFile object that holds them.
#include "store/results_tables.h"

#include <span>
#include <utility>

#include "store/strings_check.h"

namespace ks {

namespace {

// How many chunks past the flushed end a killed writer may have written into: rank 0 flushes every
// 256 results or 2 seconds, far less than 64 chunks of any table.
constexpr std::uint64_t kCrashMarginChunks = 64;

}  // namespace

ResultsFile::Impl::Impl(std::filesystem::path file_path, h5::Handle file_handle, Mode mode)
    : path(std::move(file_path)),
      writable(mode != Mode::ReadOnly),
      file(std::move(file_handle)),
      layout_version(mode == Mode::Create ? kResultsLayoutVersion : read_root_attributes(id()).layout_version),
      runs_layout(run_layout(layout_version)),
      documents_layout(document_layout(layout_version)),
      ranks_layout(rank_layout(layout_version)),
      sessions_layout(session_layout(layout_version)) {
  if (writable) {  // before the tables are made or cleared: those are writes too
    reserve = SpaceReserve(path);
    reserve.ensure(kReserveBytes);
  }
  // Each table made (fresh) or opened; the small ones (documents, ranks, sessions) take the defaults.
  const bool fresh = mode == Mode::Create;
  const auto dataset = [&](const char* name, hid_t file_type, hsize_t chunk = kSmallTableChunkRows,
                           const h5::Extendable1D::Options& options = kSmallTableOptions) {
    return fresh ? h5::Extendable1D::create(id(), name, file_type, chunk, options)
                 : h5::Extendable1D::open(id(), name, options);
  };
  runs.emplace(dataset("/runs", runs_layout.file_type(), kRunsChunkRows, kRunsOptions));
  samples.emplace(dataset("/samples", H5T_IEEE_F64LE, kSamplesChunk, kSamplesOptions));
  environments.emplace(dataset("/environments", documents_layout.file_type()));
  protocols.emplace(dataset("/protocols", documents_layout.file_type()));
  ranks.emplace(dataset("/ranks", ranks_layout.file_type()));
  sessions.emplace(dataset("/sessions", sessions_layout.file_type()));
  if (layout_version >= 3)
    quantiles.emplace(dataset("/quantiles", quantile_layout().file_type(), kQuantilesChunk, kSamplesOptions));
  if (layout_version >= 4)
    sample_clocks.emplace(dataset("/sample_clocks", H5T_IEEE_F64LE, kSamplesChunk, kSamplesOptions));
  if (layout_version >= 6) run_keys.emplace(dataset("/run_keys", run_key_file_type(), kRunKeysChunk, kSamplesOptions));
  if (fresh) h5::write_string_attribute(samples->id(), "units", "ns");
  if (fresh && sample_clocks) h5::write_string_attribute(sample_clocks->id(), "units", "MHz");
  if (writable) set_metadata_evictions(id(), false);
  if (mode == Mode::Append) {
    // The file may come from a killed writer: start appending from exactly its flushed state.
    each_table([](std::string_view, auto& table, hid_t) {
      if (table) table->clear_past_end(kCrashMarginChunks);
    });
    complete_run_keys();
  }
  if (writable) remember_stored_keys();
}

void ResultsFile::Impl::complete_run_keys() {
  if (!run_keys || run_keys->size() == runs->size()) return;
  run_keys->shrink_to(runs->size());
  const std::uint64_t first = run_keys->size();
  std::vector<RunKey> keys;
  keys.reserve(runs->size() - first);
  runs->scan(runs_layout.subset({"point_id", "status", "repetition"}), first, runs->size() - first,
             [&](std::uint64_t, const StoredRun& run) { keys.push_back(run_key_of(run)); });
  run_keys->append(run_key_memory_type(), keys.size(), keys.data());
}

void ResultsFile::Impl::remember_stored_keys() {
  for (const auto& document : environments->read_all(documents_layout)) environment_digests.insert(document.digest);
  for (const auto& document : protocols->read_all(documents_layout)) protocol_digests.insert(document.digest);
  stored_ranks = ranks->read_all(ranks_layout);
}

void ResultsFile::Impl::put_document(h5::Table<DigestedDocument>& table, std::set<std::string>& digests,
                                     const std::string& digest, const std::string& json_text) {
  if (digest.empty()) throw ResultsFileError("a document's digest is empty");
  if (digests.contains(digest)) return;
  reserve.ensure(kReserveBytes + 4 * json_text.size());
  DigestedDocument document{digest, json_text};
  put_checks(std::span(&document, 1), documents_layout, layout_version);
  table.append(std::span(&document, 1), documents_layout);
  digests.insert(digest);
}

void ResultsFile::Impl::close() {
  each_table([](std::string_view, auto& table, hid_t) { table.reset(); });
  if (!file.reset()) h5::fail("closing the file");
}

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

void repair_end_of_allocation(hid_t file) {
  h5::check_status(H5Fincrement_filesize(file, 0), "raising the end of allocation to the file size");
}

h5::Handle file_access(bool file_locking) {
  h5::Handle fapl = h5::own<H5Pclose>(H5Pcreate(H5P_FILE_ACCESS), "making file access properties");
  h5::check_status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_EARLIEST, H5F_LIBVER_V18),
                   "capping the file format at HDF5 1.8");
  if (!file_locking) h5::check_status(H5Pset_file_locking(fapl.get(), false, true), "turning file locking off");
  return fapl;
}

h5::Handle open_file(const std::filesystem::path& path, unsigned flags, bool file_locking) {
  const h5::Handle fapl = file_access(file_locking);
  return h5::own<H5Fclose>(H5Fopen(path.c_str(), flags, fapl.get()), "opening the HDF5 file");
}

ResultsFile::ResultsFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ResultsFile::ResultsFile(ResultsFile&&) noexcept = default;
ResultsFile& ResultsFile::operator=(ResultsFile&&) noexcept = default;
ResultsFile::~ResultsFile() = default;

ResultsFile::Impl& ResultsFile::impl() const {
  if (!impl_) throw ResultsFileError("the results file was finished (closed) already");
  return *impl_;
}

const std::filesystem::path& ResultsFile::path() const { return impl().path; }

std::uint64_t ResultsFile::run_count() const { return impl().runs->size(); }
std::uint64_t ResultsFile::sample_count() const { return impl().samples->size(); }

}  // namespace ks
