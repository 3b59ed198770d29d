// What status, show, report, compare and a resume read of a results file: its root attributes, its
// tables, and the statuses of its points, which are read from /run_keys where the file has it whole
// (layout 6 on) and from the columns of /runs otherwise. Reading works on a file being appended to.
#include "store/results_file.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/huge_pages.h"
#include "store/damage_check.h"
#include "store/results_tables.h"

namespace ks {

namespace {

// A long read of a file open for writing (every row's strings) would leave each heap it read in a
// cache that evicts nothing. Once flushed, nothing in the cache is dirty, and evicting is safe
// until the next write: the read runs with evictions on, in a cache of bounded size.
template <class Read> void with_evictions_while_reading(hid_t file, bool writable, Read&& read) {
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

// `count` doubles of a one-dimensional dataset from `offset`.
std::vector<double> read_doubles(const std::filesystem::path& path, std::string_view name, const h5::Extendable1D& data,
                                 std::uint64_t offset, std::uint64_t count) {
  return guarded(path, fmt::format("reading {}", name), [&] {
    std::vector<double> values(count);
    data.read(H5T_NATIVE_DOUBLE, offset, count, values.data());
    return values;
  });
}

// Every row of a table.
template <class Record> std::vector<Record> read_table(const ResultsFile::Impl& self, std::string_view name,
                                                       const std::optional<h5::Table<Record>>& table,
                                                       const h5::CompoundLayout<Record>& layout) {
  return guarded(self.path, fmt::format("reading {}", name), [&] { return table->read_all(layout); });
}

}  // namespace

ResultsFile ResultsFile::open_read_only(const std::filesystem::path& path) {
  check_readable(path, false);
  return guarded(path, "opening it to read", [&] {
    return ResultsFile(std::make_unique<Impl>(path, open_file(path, H5F_ACC_RDONLY, false), Impl::Mode::ReadOnly));
  });
}

RunInfo ResultsFile::read_info() const {
  Impl& self = impl();
  return guarded(self.path, "reading the root attributes", [&] { return read_root_attributes(self.id()); });
}

std::vector<StoredRun> ResultsFile::read_runs() const {
  return read_table(impl(), "/runs", impl().runs, impl().runs_layout);
}

std::vector<StoredRun> ResultsFile::read_runs(std::uint64_t first, std::uint64_t count) const {
  Impl& self = impl();
  return guarded(self.path, "reading /runs", [&] {
    if (first > self.runs->size() || count > self.runs->size() - first)
      throw ResultsFileError("rows " + std::to_string(first) + " to " + std::to_string(first + count) +
                             " asked, the table has " + std::to_string(self.runs->size()));
    return self.runs->read(self.runs_layout, first, count);
  });
}

std::vector<double> ResultsFile::read_samples(std::uint64_t offset, std::uint64_t count) const {
  return read_doubles(impl().path, "/samples", *impl().samples, offset, count);
}

std::vector<double> ResultsFile::read_sample_clocks(std::uint64_t offset, std::uint64_t count) const {
  Impl& self = impl();
  if (!self.sample_clocks || count == 0) return {};
  return read_doubles(self.path, "/sample_clocks", *self.sample_clocks, offset, count);
}

std::vector<Quantile> ResultsFile::read_quantiles(std::uint64_t offset, std::uint64_t count) const {
  Impl& self = impl();
  if (!self.quantiles) return {};
  return guarded(self.path, "reading /quantiles",
                 [&] { return self.quantiles->read(quantile_layout(), offset, count); });
}

std::vector<DigestedDocument> ResultsFile::read_environments() const {
  return read_table(impl(), "/environments", impl().environments, impl().documents_layout);
}

std::vector<DigestedDocument> ResultsFile::read_protocols() const {
  return read_table(impl(), "/protocols", impl().protocols, impl().documents_layout);
}

std::vector<RankInfo> ResultsFile::read_ranks() const {
  return read_table(impl(), "/ranks", impl().ranks, impl().ranks_layout);
}

std::vector<SessionInfo> ResultsFile::read_sessions() const {
  return read_table(impl(), "/sessions", impl().sessions, impl().sessions_layout);
}

void ResultsFile::scan_runs(const std::vector<std::string_view>& columns,
                            const std::function<void(std::uint64_t row, const StoredRun& run)>& visit) const {
  Impl& self = impl();
  std::vector<std::string_view> present;
  for (std::string_view name : columns)
    if (std::ranges::any_of(self.runs_layout.columns(), [&](const auto& column) { return column.name == name; }))
      present.push_back(name);
  guarded(self.path, "reading /runs", [&] {
    with_evictions_while_reading(self.id(), self.writable, [&] {
      self.runs->scan(self.runs_layout.subset(present), 0, self.runs->size(), visit);
    });
  });
}

void ResultsFile::scan_statuses(
    const std::function<void(std::uint64_t row, const std::string& point_id, std::int32_t repetition,
                             const std::string& status)>& visit) const {
  scan_runs({"point_id", "status", "repetition"},
            [&](std::uint64_t row, const StoredRun& run) { visit(row, run.point_id, run.repetition, run.status); });
}

void ResultsFile::scan_point_keys(
    const std::function<void(std::uint64_t row, const PointKey& key, std::size_t status)>& visit) const {
  Impl& self = impl();
  if (!self.run_keys_whole()) {
    scan_statuses(
        [&](std::uint64_t row, const std::string& point_id, std::int32_t repetition, const std::string& status) {
          const auto index = status_index(status);
          if (!index)
            throw ResultsFileError(
                fmt::format("row {} of /runs has status \"{}\", which is none of kernelsweep's", row, status));
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
  std::sort(rows.begin(), rows.end(),
            [](const Row& a, const Row& b) { return a.key != b.key ? PointKeyLess()(a.key, b.key) : a.row < b.row; });
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

}  // namespace ks
