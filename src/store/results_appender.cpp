// Rank 0's writing of the results file: making it, opening it again to append (--resume), appending
// batches of runs and the documents, ranks and sessions they cite, flushing, and finishing. What a
// crash between two flushes leaves is described in results_file.h; every write first reserves the
// space it may need (space_reserve.h), so that a full disk fails before HDF5 touches the file.
#include "store/results_file.h"

#include <algorithm>
#include <span>
#include <utility>

#include <fmt/format.h>

#include "store/damage_check.h"
#include "store/results_tables.h"
#include "store/strings_check.h"

namespace ks {

namespace {

std::uint64_t batch_bytes(const std::vector<StoredRun>& batch) {
  std::uint64_t bytes = 0;
  for (const StoredRun& run : batch)
    bytes += 1024 + run.params_json.size() + run.message.size() + 8 * run.samples_ns.size() +
             16 * run.quantiles.size() + 8 * run.sample_sm_clock_mhz.size();
  return bytes;
}

// guarded() for what writes, refused on a file not open to write (`refused`: what cannot be done), and
// a write that fails leaves the file for the next open to check.
template <class Body>
void writing(ResultsFile::Impl& self, std::string_view action, std::string_view refused, Body&& body) {
  try {
    guarded(self.path, action, [&] {
      if (!self.writable || !self.file.valid())
        throw ResultsFileError(fmt::format("cannot {}: {}", refused,
                                           self.writable ? "the file is closed" : "the file was opened read-only"));
      body(self);
    });
  } catch (...) {
    self.write_failed = true;
    throw;
  }
}

}  // namespace

ResultsFile ResultsFile::create(const std::filesystem::path& path, const RunInfo& info,
                                const std::vector<SessionInfo>& sessions) {
  if (std::filesystem::exists(path))
    throw ResultsFileError("refusing to create results file " + path.string() + ": it already exists");
  return guarded(path, "creating it", [&] {
    h5::Handle fapl = file_access(true);
    // H5F_ACC_EXCL as well: a file that appears between the check above and here is not replaced either.
    h5::Handle file =
        h5::own<H5Fclose>(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()), "creating the HDF5 file");
    try {
      write_root_attributes(file.get(), info);
      auto impl = std::make_unique<Impl>(path, std::move(file), Impl::Mode::Create);
      std::vector<SessionInfo> rows = sessions;
      if (rows.empty())
        rows.push_back({info.started_at, info.world_size, info.host, info.command_line, info.kernelsweep_version,
                        info.git_commit});
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

ResultsFile ResultsFile::open_for_append(const std::filesystem::path& path) {
  check_readable(path, true);
  forget_checked(path);
  return guarded(path, "opening it to append", [&] {
    h5::Handle file = open_file(path, H5F_ACC_RDWR, true);
    repair_end_of_allocation(file.get());
    return ResultsFile(std::make_unique<Impl>(path, std::move(file), Impl::Mode::Append));
  });
}

void ResultsFile::append(std::vector<StoredRun>& batch) {
  writing(impl(), "appending " + std::to_string(batch.size()) + " runs", "append runs", [&](Impl& self) {
    self.reserve.ensure(kReserveBytes + 4 * batch_bytes(batch));
    std::vector<double> samples, sample_clocks;
    std::vector<Quantile> quantiles;
    for (StoredRun& record : batch) {
      if (!status_index(record.status))
        throw ResultsFileError("point " + record.point_id + " has unknown status \"" + record.status + "\"");
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
        if (read)
          sample_clocks.insert(sample_clocks.end(), record.sample_sm_clock_mhz.begin(),
                               record.sample_sm_clock_mhz.end());
      }
    }
    // Samples, clocks and quantiles before rows: a crash between them leaves unreferenced values,
    // never a row pointing past the end of /samples, /sample_clocks or /quantiles.
    self.samples->append(H5T_NATIVE_DOUBLE, samples.size(), samples.data());
    if (!sample_clocks.empty())
      self.sample_clocks->append(H5T_NATIVE_DOUBLE, sample_clocks.size(), sample_clocks.data());
    if (!quantiles.empty()) self.quantiles->append(std::span(quantiles), quantile_layout());
    put_checks(std::span(batch), self.runs_layout, self.layout_version);
    self.runs->append(std::span(batch), self.runs_layout);
    if (self.run_keys) {
      std::vector<RunKey> keys(batch.size());
      std::transform(batch.begin(), batch.end(), keys.begin(), run_key_of);
      self.run_keys->append(run_key_memory_type(), keys.size(), keys.data());
    }
  });
}

void ResultsFile::put_environment(const std::string& digest, const std::string& json_text) {
  writing(impl(), "storing environment " + digest, "store an environment",
          [&](Impl& self) { self.put_document(*self.environments, self.environment_digests, digest, json_text); });
}

void ResultsFile::put_protocol(const std::string& digest, const std::string& json_text) {
  writing(impl(), "storing protocol " + digest, "store a protocol",
          [&](Impl& self) { self.put_document(*self.protocols, self.protocol_digests, digest, json_text); });
}

void ResultsFile::put_rank(const RankInfo& rank) {
  writing(impl(), "storing rank " + std::to_string(rank.rank), "store a rank", [&](Impl& self) {
    if (std::find(self.stored_ranks.begin(), self.stored_ranks.end(), rank) != self.stored_ranks.end()) return;
    self.reserve.ensure(kReserveBytes);
    RankInfo row = rank;
    put_checks(std::span(&row, 1), self.ranks_layout, self.layout_version);
    self.ranks->append(std::span(&row, 1), self.ranks_layout);
    self.stored_ranks.push_back(rank);
  });
}

void ResultsFile::add_session(const SessionInfo& session) {
  writing(impl(), "recording a session", "record a session", [&](Impl& self) {
    self.reserve.ensure(kReserveBytes);
    write_ended_at(self.id(), "");
    SessionInfo row = session;
    put_checks(std::span(&row, 1), self.sessions_layout, self.layout_version);
    self.sessions->append(std::span(&row, 1), self.sessions_layout);
  });
}

void ResultsFile::flush() {
  writing(impl(), "flushing", "flush", [&](Impl& self) {
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
  const bool write_failed = impl_->write_failed;
  impl_->close();
  impl_.reset();
  H5garbage_collect();  // HDF5 keeps the blocks it freed in lists of its own, for reuse
  impl_ = std::make_unique<Impl>(path, open_file(path, H5F_ACC_RDWR, true), Impl::Mode::Append);
  impl_->write_failed = write_failed;
}

void ResultsFile::finish(const std::string& ended_at) {
  Impl& self = impl();
  writing(self, "finishing", "finish", [&](Impl&) {
    write_ended_at(self.id(), ended_at);
    self.close();
  });
  const std::filesystem::path path = self.path;
  const bool sound = !self.write_failed;
  impl_.reset();  // the space reserve gives its blocks back: the file's last change
  if (sound) mark_written(path);
}

}  // namespace ks
