// The schema's columns and root attributes (results_layout.h): which columns each layout version
// has, and how the root attributes are written, read and checked.
#include "store/results_layout.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <iterator>
#include <string>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "store/strings_check.h"

namespace ks {

namespace {

constexpr const char* kFormatName = "kernelsweep-results";

// Layout 2 on: the strings_check column closes every table.
template <class Record>
h5::CompoundLayout<Record> with_check(std::vector<Field<Record>> columns, std::int64_t layout_version) {
  if (layout_version >= 2) columns.push_back(KS_FIELD(Record, "strings_check", strings_check));
  return h5::CompoundLayout<Record>(std::move(columns));
}

h5::Handle run_key_type(bool in_file) {
  const std::string what = "making the type of /run_keys";
  const hsize_t key_bytes = std::tuple_size_v<PointKey>;
  const hid_t byte = in_file ? H5T_STD_U8LE : H5T_NATIVE_UINT8;
  h5::Handle key = h5::own<H5Tclose>(H5Tarray_create2(byte, 1, &key_bytes), what);
  h5::Handle status = h5::own<H5Tclose>(H5Tenum_create(byte), what);
  for (std::uint8_t i = 0; i < std::size(kStatuses); ++i)
    h5::check_status(H5Tenum_insert(status.get(), kStatuses[i], &i), what);
  // In the file the fields are packed (37 bytes a row); in memory they are RunKey's.
  const std::size_t status_at = in_file ? key_bytes : offsetof(RunKey, status);
  const std::size_t repetition_at = in_file ? key_bytes + 1 : offsetof(RunKey, repetition);
  h5::Handle type = h5::own<H5Tclose>(H5Tcreate(H5T_COMPOUND, in_file ? key_bytes + 1 + 4 : sizeof(RunKey)), what);
  h5::check_status(H5Tinsert(type.get(), "point_key", in_file ? 0 : offsetof(RunKey, point_key), key.get()), what);
  h5::check_status(H5Tinsert(type.get(), "status", status_at, status.get()), what);
  h5::check_status(H5Tinsert(type.get(), "repetition", repetition_at, in_file ? H5T_STD_I32LE : H5T_NATIVE_INT32),
                   what);
  return type;
}

// The root attributes that are RunInfo's own members, in the order they are written: strings, and
// integers as int64.
const std::vector<Field<RunInfo>>& root_attribute_fields() {
  using I = RunInfo;
  static const std::vector<Field<RunInfo>> fields{KS_FIELD(I, "sweep_name", sweep_name),
                                                  KS_FIELD(I, "sweep_path", sweep_path),
                                                  KS_FIELD(I, "sweep_text", sweep_text),
                                                  KS_FIELD(I, "plan_size", plan_size),
                                                  KS_FIELD(I, "kernelsweep_version", kernelsweep_version),
                                                  KS_FIELD(I, "git_commit", git_commit),
                                                  KS_FIELD(I, "started_at", started_at),
                                                  KS_FIELD(I, "ended_at", ended_at),
                                                  KS_FIELD(I, "world_size", world_size),
                                                  KS_FIELD(I, "host", host),
                                                  KS_FIELD(I, "command_line", command_line)};
  return fields;
}

// The root attributes' strings, in the order they are written. The attributes where and labels,
// written only when not empty, are checked only then (files without them keep the checksum they had).
std::uint64_t root_strings_check(const RunInfo& info) {
  StringsCheck check;
  check.add_strings(info, root_attribute_fields());
  if (!info.where.empty()) check.add(info.where);
  if (!info.labels.empty()) check.add(labels_json(info.labels));
  return check.finish();
}

void write_strings_check(hid_t file, const RunInfo& info) {
  h5::write_int64_attribute(file, "strings_check", std::bit_cast<std::int64_t>(root_strings_check(info)));
}

}  // namespace

// The RunRecord's own fields (cluster/run_record.h), then what the store adds.
h5::CompoundLayout<StoredRun> run_layout(std::int64_t layout_version) {
  using R = StoredRun;
  std::vector<Field<R>> columns = run_record_fields<R>();
  const auto add = [&columns](const std::vector<Field<R>>& more) {
    columns.insert(columns.end(), more.begin(), more.end());
  };
  add({KS_FIELD(R, "protocol_digest", cited.protocol_digest),
       KS_FIELD(R, "environment_digest", cited.environment_digest),
       KS_FIELD(R, "workload_digest", cited.workload_digest),
       KS_FIELD(R, "implementation_digest", cited.implementation_digest), KS_FIELD(R, "samples_offset", samples_offset),
       KS_FIELD(R, "samples_count", samples_count)});
  if (layout_version >= 3) {
    add({KS_FIELD(R, "quantiles_offset", quantiles_offset), KS_FIELD(R, "quantiles_count", quantiles_count)});
    add(gpu_state_fields<R>());
  }
  if (layout_version >= 4) {
    add({KS_FIELD(R, "sample_clocks_offset", sample_clocks_offset),
         KS_FIELD(R, "sample_clocks_count", sample_clocks_count)});
    add(repetition_fields<R>());
    add(noise_fields<R>());
  }
  if (layout_version >= 5) add(collective_fields<R>());
  if (layout_version >= 7) add(speed_of_light_fields<R>());
  if (layout_version >= 8) add(energy_fields<R>());
  return with_check(std::move(columns), layout_version);
}

// /quantiles: numbers only, which the chunks' checksums cover.
const h5::CompoundLayout<Quantile>& quantile_layout() {
  static const h5::CompoundLayout<Quantile> layout(
      {KS_FIELD(Quantile, "quantile", quantile), KS_FIELD(Quantile, "value_ns", value_ns)});
  return layout;
}

std::optional<std::uint8_t> status_index(std::string_view status) {
  const auto known = std::find(std::begin(kStatuses), std::end(kStatuses), status);
  if (known == std::end(kStatuses)) return std::nullopt;
  return static_cast<std::uint8_t>(known - std::begin(kStatuses));
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
  std::vector<Field<K>> columns{KS_FIELD(K, "rank", rank),
                                KS_FIELD(K, "host", host),
                                KS_FIELD(K, "gpu_index", gpu_index),
                                KS_FIELD(K, "gpu_uuid", gpu_uuid),
                                KS_FIELD(K, "pci_bus_id", pci_bus_id),
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

void write_root_attributes(hid_t file, const RunInfo& info) {
  h5::write_string_attribute(file, "format", kFormatName);
  h5::write_int64_attribute(file, "layout_version", kResultsLayoutVersion);
  for_each_field(info, root_attribute_fields(), [&](const Field<RunInfo>& field, const auto& value) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>)
      h5::write_string_attribute(file, field.name.c_str(), value);
    else h5::write_int64_attribute(file, field.name.c_str(), static_cast<std::int64_t>(value));
  });
  h5::write_int64_attribute(file, "shard_index", info.shard_index);
  h5::write_int64_attribute(file, "shard_count", info.shard_count);
  if (!info.where.empty()) h5::write_string_attribute(file, "where", info.where);
  if (!info.labels.empty()) h5::write_string_attribute(file, "labels", labels_json(info.labels));
  write_strings_check(file, info);
}

RunInfo read_root_attributes(hid_t file) {
  if (h5::read_string_attribute(file, "format") != kFormatName)
    throw ResultsFileError(std::string("root attribute format is not \"") + kFormatName + "\"");
  RunInfo info;
  info.layout_version = h5::read_int64_attribute(file, "layout_version");
  for (const Field<RunInfo>& field : root_attribute_fields()) {
    std::visit(
        [&](auto access) {
          auto& target = access(info);
          using Value = std::remove_reference_t<decltype(target)>;
          if constexpr (std::is_same_v<Value, std::string>)
            target = h5::read_string_attribute(file, field.name.c_str());
          else target = static_cast<Value>(h5::read_int64_attribute(file, field.name.c_str()));
        },
        field.access);
  }
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
  if (h5::has_attribute(file, "labels")) {
    try {
      info.labels = labels_from_json(h5::read_string_attribute(file, "labels"));
    } catch (const std::invalid_argument& error) {
      throw ResultsFileError(fmt::format("root attribute labels: {}", error.what()));
    }
  }
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

}  // namespace ks
