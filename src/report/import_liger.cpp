#include "report/import_liger.h"

#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/canonical_json.h"
#include "common/digest.h"
#include "kernelindex/kernelindex.h"
#include "plan/point.h"
#include "report/csv.h"

namespace ks {
namespace {

// Constants of Liger's harness (benchmark/scripts/utils.py): where its figures come from.
constexpr const char* kSource = "liger-kernel-bench";
constexpr const char* kHarnessName = "Liger-Kernel benchmark scripts";
constexpr const char* kRepository = "https://github.com/linkedin/Liger-Kernel";
constexpr const char* kFamily = "liger_kernel_bench";
constexpr const char* kSweepName = "liger-import";
constexpr double kNsPerMs = 1e6;
constexpr double kBytesPerLigerMB = 1048576.0;  // _test_memory: max_memory_allocated() / 2**20
constexpr const char* kNoMode = "unspecified";  // Liger writes an empty mode for kernels without one

enum class Metric { speed, memory };

// One CSV row, read and checked.
struct LigerRow {
  std::size_t line = 0;
  std::string kernel, provider, mode, gpu, version;
  Metric metric = Metric::speed;
  Json params;
  double y50 = 0, y20 = 0, y80 = 0;  // in the CSV's unit (ms, MB)
  std::string observed_at;           // ISO 8601 UTC with milliseconds
  std::string fields;                // every field, for telling copies apart
};

std::string short_dtype(std::string dtype) {
  if (dtype.rfind("torch.", 0) == 0) dtype.erase(0, 6);
  if (dtype == "bfloat16") return "bf16";
  if (dtype == "half") return "fp16";
  if (dtype == "float") return "fp32";
  if (dtype == "double") return "fp64";
  if (dtype.rfind("float", 0) == 0) return "fp" + dtype.substr(5);
  return dtype;
}

// The whole text as a number of type T; none where any of it is not one.
template <typename T> std::optional<T> parsed(std::string_view text) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// x_value as Liger wrote it: an int, a float, or (rarely) a string.
Json parse_x_value(const std::string& text) {
  if (const auto integer = parsed<std::int64_t>(text)) return *integer;
  if (const auto number = parsed<double>(text); number && std::isfinite(*number)) return *number;
  return text;
}

// Python's repr of a dict as JSON text: quoted strings double-quoted, True/False/None as JSON's.
std::string python_literal_as_json(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\'' || c == '"') {
      out += '"';
      for (++i; i < text.size() && text[i] != c; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) {
          if (text[i + 1] != '\'') out += '\\';
          out += text[++i];
        } else if (text[i] == '"') {
          out += "\\\"";
        } else {
          out += text[i];
        }
      }
      out += '"';
      ++i;
      continue;
    }
    const auto letter = [](char x) { return (x >= 'A' && x <= 'Z') || (x >= 'a' && x <= 'z'); };
    if (!letter(c)) {
      out += c;
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && letter(text[end])) ++end;
    const std::string_view word = text.substr(i, end - i);
    out += word == "True" ? "true" : word == "False" ? "false" : word == "None" ? "null" : std::string(word);
    i = end;
  }
  return out;
}

// What each kind of row measured, in the words of the protocol's notes.
std::string measured_pass(const std::string& mode) {
  if (mode == "full") return "the forward pass plus the backward pass";
  if (mode == "forward") return "the forward pass";
  if (mode == "backward") return "the backward pass";
  if (mode == "no-grad-forward") return "the forward pass under torch.no_grad";
  if (mode == kNoMode) return "the benchmark's function (the CSV names no mode)";
  return fmt::format("the {} pass", mode);
}

std::string backend_of(const std::string& gpu) {
  const std::string vendor = gpu_vendor(gpu);
  if (vendor == "nvidia") return "cuda";
  if (vendor == "amd") return "rocm";
  if (vendor == "intel") return "xpu";
  return "gpu";
}

Json liger_implementation(const LigerRow& row) {
  const std::string backend = backend_of(row.gpu);
  Json spec = {{"kernel", row.kernel},
               {"implementation", row.provider},
               {"backend", backend},
               {"source", {{"tool", "Liger-Kernel"}, {"version", row.version}, {"repository", kRepository}}}};
  return kernelindex_document(
      "Implementation",
      {{"name", metadata_name(fmt::format("liger-{}-{}-{}-{}", row.kernel, row.provider, backend, row.version))},
       {"title", fmt::format("{} · {} ({}) · Liger-Kernel {}", row.kernel, row.provider, backend, row.version)}},
      std::move(spec));
}

// The BenchmarkProtocol of Liger's timings of one kernel_operation_mode (triton.testing.do_bench,
// quantiles 0.5/0.2/0.8), or of its peak-memory measurements of one mode.
Json liger_protocol(Metric metric, const std::string& mode) {
  const bool speed = metric == Metric::speed;
  const Json measurement =
      speed ? Json{{"timer", "cuda_events"}, {"primaryStatistic", "median"}}
            : Json{{"instrument", "torch.cuda.max_memory_allocated"}, {"primaryStatistic", "median"}, {"unit", "MiB"}};
  const std::string what =
      speed ? fmt::format(
                  "Timed: {}, via triton.testing.do_bench with quantiles 0.5/0.2/0.8 (median with p20/p80 "
                  "spread).",
                  measured_pass(mode))
            : fmt::format(
                  "Peak memory: torch.cuda.max_memory_allocated() after {}, the peak reset before each call, "
                  "with quantiles 0.5/0.2/0.8 over the calls, in MiB (the CSV's MB). It counts every tensor "
                  "alive in the process (inputs, weights, gradients), not only the kernel's own.",
                  measured_pass(mode));
  const std::string notes = fmt::format(
      "{} The upstream CSV records no CUDA, driver, or torch version; the Liger release rides each run's labels. "
      "Comparable only within one kernel, workload, {} pass, and GPU.",
      what, speed ? "timed" : "measured");
  Json spec = {{"harness", {{"name", kHarnessName}, {"repository", kRepository}}},
               {"measurement", measurement},
               {"comparability", {{"family", kFamily}, {"notes", notes}}}};
  return kernelindex_document(
      "BenchmarkProtocol",
      {{"name", metadata_name((speed ? "liger-bench-do-bench-" : "liger-bench-memory-") + mode)},
       {"title", fmt::format("Liger benchmark harness · {} pass{}", mode, speed ? "" : " · peak memory")}},
      std::move(spec));
}

// The ExecutionEnvironment of a gpu_name: the hardware its name tells (hardware_of_gpu_name), no
// software (the CSV records none).
Json liger_environment(const std::string& gpu_name) {
  return kernelindex_document("ExecutionEnvironment",
                              {{"name", metadata_name("liger-bench-" + gpu_name)},
                               {"title", fmt::format("Liger benchmark host · {}", gpu_name_without_vendor(gpu_name))}},
                              {{"hardware", hardware_of_gpu_name(gpu_name)}, {"software", Json::object()}});
}

// --- reading the rows ------------------------------------------------------------------------------

// The columns the importer reads (others are ignored).
const std::vector<std::string>& liger_columns() {
  static const std::vector<std::string> columns = {"kernel_name", "kernel_provider", "kernel_operation_mode",
                                                   "metric_name", "metric_unit",     "x_name",
                                                   "x_label",     "x_value",         "y_value_50",
                                                   "y_value_20",  "y_value_80",      "extra_benchmark_config_str",
                                                   "gpu_name",    "timestamp",       "liger_version"};
  return columns;
}

class RowReader {
 public:
  RowReader(const CsvTable& table, const std::string& file) : table_(table), file_(file) {
    for (const std::string& name : liger_columns()) {
      const auto index = table.column(name);
      if (!index) fail(1, name, fmt::format("missing (the header has {})", fmt::join(table.header, ", ")));
      columns_[name] = *index;
    }
  }

  // The row, or the reason it is left out.
  std::variant<LigerRow, std::string> read(const CsvRecord& record) const {
    check_field_count(record);
    LigerRow row;
    row.line = record.line;
    row.kernel = name(record, "kernel_name");
    row.provider = name(record, "kernel_provider");
    row.mode = field(record, "kernel_operation_mode");
    if (row.mode.empty()) row.mode = kNoMode;
    row.gpu = name(record, "gpu_name");
    row.version = field(record, "liger_version");
    if (row.version.empty()) row.version = "unknown";
    row.observed_at = timestamp(record, "timestamp");
    row.params = params(record);
    row.y50 = number(record, "y_value_50");
    row.y20 = number(record, "y_value_20");
    row.y80 = number(record, "y_value_80");
    row.fields = fmt::format("{}\x1f", fmt::join(record.fields, "\x1f"));
    const std::string metric = field(record, "metric_name"), unit = field(record, "metric_unit");
    if (metric == "speed" && unit == "ms") row.metric = Metric::speed;
    else if (metric == "memory" && unit == "MB") row.metric = Metric::memory;
    else return fmt::format("metric_name '{}' in '{}' (known: speed in ms, memory in MB)", metric, unit);
    for (const char* column : {"y_value_50", "y_value_20", "y_value_80"})
      if (!std::isfinite(number(record, column)))
        return fmt::format("no measurement ({} is {})", column, field(record, column));
    return row;
  }

 private:
  [[noreturn]] void fail(std::size_t line, const std::string& column, const std::string& what) const {
    throw ImportInputError(fmt::format("{}:{}: column {}: {}", file_, line, column, what));
  }

  void check_field_count(const CsvRecord& record) const {
    const std::size_t have = record.fields.size(), want = table_.header.size();
    if (have < want)
      fail(record.line, table_.header[have], fmt::format("missing ({} fields where the header has {})", have, want));
    if (have > want)
      fail(record.line, table_.header.back(), fmt::format("{} fields where the header has {}", have, want));
  }

  const std::string& field(const CsvRecord& record, const std::string& column) const {
    return record.fields[columns_.at(column)];
  }

  const std::string& name(const CsvRecord& record, const std::string& column) const {
    const std::string& text = field(record, column);
    if (text.empty()) fail(record.line, column, "empty");
    return text;
  }

  double number(const CsvRecord& record, const std::string& column) const {
    const std::string& text = field(record, column);
    const auto value = parsed<double>(text);
    if (!value) fail(record.line, column, fmt::format("'{}' is not a number", text));
    return *value;
  }

  // Liger's time.strftime("%Y-%m-%d %H:%M:%S"), read as UTC (the CSV records no zone).
  std::string timestamp(const CsvRecord& record, const std::string& column) const {
    std::string text = field(record, column);
    if (text.size() > 10 && text[10] == ' ') text[10] = 'T';
    if (!text.empty() && text.back() != 'Z' && (text.size() < 6 || text.compare(text.size() - 6, 6, "+00:00") != 0))
      text += 'Z';
    try {
      return iso_utc_milliseconds(text);
    } catch (const std::invalid_argument&) {
      fail(record.line, column, fmt::format("'{}' is not a time (YYYY-MM-DD HH:MM:SS)", field(record, column)));
    }
  }

  // x_name: x_value over the entries of extra_benchmark_config_str (a swept dimension's entry there
  // is a placeholder such as "T": null).
  Json params(const CsvRecord& record) const {
    Json params;
    try {
      params = liger_extra_config(field(record, "extra_benchmark_config_str"));
    } catch (const std::invalid_argument& e) { fail(record.line, "extra_benchmark_config_str", e.what()); }
    params[name(record, "x_name")] = parse_x_value(field(record, "x_value"));
    return kernelsweep_names(params);
  }

  const CsvTable& table_;
  const std::string& file_;
  std::map<std::string, std::size_t> columns_;
};

// --- documents -------------------------------------------------------------------------------------

// The cited documents, made once each: one protocol per metric and mode, one environment per GPU,
// one implementation per kernel, provider, backend and Liger release.
class DocumentCache {
 public:
  std::shared_ptr<const CitedDocument> protocol(const LigerRow& row) {
    return get(protocols_, (row.metric == Metric::speed ? "speed/" : "memory/") + row.mode,
               [&] { return liger_protocol(row.metric, row.mode); });
  }
  std::shared_ptr<const CitedDocument> environment(const LigerRow& row) {
    return get(environments_, row.gpu, [&] { return liger_environment(row.gpu); });
  }
  std::shared_ptr<const CitedDocument> implementation(const LigerRow& row) {
    return get(implementations_,
               fmt::format("{}\x1f{}\x1f{}\x1f{}", row.kernel, row.provider, backend_of(row.gpu), row.version),
               [&] { return liger_implementation(row); });
  }

 private:
  using Cache = std::unordered_map<std::string, std::shared_ptr<const CitedDocument>>;
  template <class Make>
  static std::shared_ptr<const CitedDocument> get(Cache& cache, const std::string& key, Make make) {
    auto& slot = cache[key];
    if (!slot) slot = std::make_shared<const CitedDocument>(cite(make()));
    return slot;
  }
  Cache protocols_, environments_, implementations_;
};

std::string benchmark_of(const LigerRow& row) {
  std::string benchmark = fmt::format("{}/{}", row.kernel, row.mode);
  if (row.metric == Metric::memory) benchmark += "/memory";
  return benchmark;
}

// kernel/mode[/memory]/provider/gpu/shape/time, the seed's form.
std::string external_id(const LigerRow& row, const std::string& shape) {
  std::string benchmark = fmt::format("{}/{}", id_segment(row.kernel), id_segment(row.mode));
  if (row.metric == Metric::memory) benchmark += "/memory";
  return fmt::format("{}/{}/{}/{}/{}", benchmark, id_segment(row.provider), slugify(row.gpu), shape,
                     timestamp_slug(row.observed_at));
}

// "liger-" + the externalId as a slug, cut to `length` characters.
std::string liger_name(const std::string& id, std::size_t length) {
  std::string name = slugify("liger-" + id).substr(0, length);
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name;
}

Json latency(const char* statistic, double ns) {
  return {{"metric", "latency"}, {"statistic", statistic}, {"unit", "ns"}, {"value", std::llround(ns)}};
}

RunRecord run_record(const LigerRow& row) {
  RunRecord record;
  Point point;
  point.kernel = row.kernel;
  point.implementation = row.provider;
  point.mode = row.mode;
  point.params = row.params;
  point.key = point_digest(point);
  record.point_id = point.id();
  record.kernel = row.kernel;
  record.implementation = row.provider;
  record.mode = row.mode;
  record.params_json = canonical_json(row.params);
  record.status = "passed";
  record.ended_at = row.observed_at;  // Liger stamps a series of runs when it is done
  if (row.metric == Metric::speed) {
    record.stats.median_ns = row.y50 * kNsPerMs;
    record.stats.p20_ns = row.y20 * kNsPerMs;
    record.stats.p80_ns = row.y80 * kNsPerMs;
  } else {
    record.device_peak_bytes = static_cast<std::uint64_t>(std::llround(row.y50 * kBytesPerLigerMB));
  }
  return record;
}

Json run_spec(const LigerRow& row, const RunRecord& record, const std::string& id, const Citations& cited) {
  const bool speed = row.metric == Metric::speed;
  Json spec = {{"status", "passed"}, {"observedAt", row.observed_at}};
  Json measurements = Json::array();
  if (speed) {
    spec["timing"] = {{"latencyNs", {{"median", std::llround(record.stats.median_ns)}}},
                      {"primaryStatistic", "median"}};
    measurements.push_back(latency("p20", record.stats.p20_ns));
    measurements.push_back(latency("p80", record.stats.p80_ns));
  } else {
    measurements.push_back(
        {{"metric", "device_memory"}, {"statistic", "peak"}, {"unit", "bytes"}, {"value", record.device_peak_bytes}});
  }
  spec["measurements"] = std::move(measurements);
  const char* unit = speed ? "ms" : "mb";
  spec["sourceNative"] = {{"source", kSource},
                          {"benchmark", benchmark_of(row)},
                          {"externalId", id},
                          {"metrics",
                           {{fmt::format("{}_20", unit), row.y20},
                            {fmt::format("{}_50", unit), row.y50},
                            {fmt::format("{}_80", unit), row.y80}}},
                          {"pointId", record.point_id}};
  spec["protocolDigest"] = cited.protocol_digest;
  spec["environmentDigest"] = cited.environment_digest;
  spec["workloadDigest"] = cited.workload_digest;
  spec["implementationDigest"] = cited.implementation_digest;
  return spec;
}

// Rows whose externalIds would be equal (they differ only in what the id leaves out, such as a flag
// of extra_benchmark_config_str) each get 8 hex digits of their fields' SHA-256 after the shape.
std::vector<std::string> distinct_external_ids(const std::vector<LigerRow>& rows) {
  std::vector<std::string> shapes, ids;
  std::map<std::string, int> uses;
  for (const LigerRow& row : rows) {
    shapes.push_back(liger_shape_slug(row.params));
    ids.push_back(external_id(row, shapes.back()));
    ++uses[ids.back()];
  }
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (uses[ids[i]] > 1) ids[i] = external_id(rows[i], shapes[i] + "-" + sha256_hex(rows[i].fields).substr(0, 8));
  return ids;
}

// The seed's names (the name cut at 100 characters) where they are distinct; a name the cut made
// ambiguous becomes its first 89 characters, '-' and 10 hex digits of the externalId's SHA-256.
std::vector<std::string> run_names(const std::vector<std::string>& ids) {
  std::vector<std::string> names;
  std::map<std::string, int> uses;
  for (const std::string& id : ids) ++uses[names.emplace_back(liger_name(id, kMaxMetadataNameLength))];
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (uses[names[i]] > 1)
      names[i] = liger_name(ids[i], kMaxMetadataNameLength - 11) + "-" + sha256_hex(ids[i]).substr(0, 10);
  return names;
}

ImportedRun imported_run(const LigerRow& row, const std::string& id, const std::string& name, DocumentCache& cache,
                         const KernelTitles& titles) {
  ImportedRun run;
  run.line = row.line;
  run.record = run_record(row);
  run.protocol = cache.protocol(row);
  run.environment = cache.environment(row);
  run.implementation = cache.implementation(row);
  const std::string title = titles(row.kernel);
  run.workload = workload_document(row.kernel, title, row.params);
  run.cited = {run.protocol->digest, run.environment->digest, document_digest(run.workload),
               run.implementation->digest};
  std::string run_title = fmt::format("{} · {} · {}", title, row.provider, row.mode);
  if (row.metric == Metric::memory) run_title += " · peak memory";
  run.run = kernelindex_document("BenchmarkRun",
                                 {{"name", name}, {"title", run_title}, {"labels", {{"liger_version", row.version}}}},
                                 run_spec(row, run.record, id, run.cited));
  return run;
}

}  // namespace

Json liger_extra_config(const std::string& text) {
  if (text.empty() || text == "null" || text == "None") return Json::object();
  Json config = Json::parse(text, nullptr, false);
  if (config.is_discarded()) config = Json::parse(python_literal_as_json(text), nullptr, false);
  if (config.is_discarded())
    throw std::invalid_argument(fmt::format("'{}' is neither JSON nor a Python dict", text.substr(0, 80)));
  if (!config.is_object()) throw std::invalid_argument(fmt::format("'{}' is not a dict", text.substr(0, 80)));
  return config;
}

Json kernelsweep_names(const Json& params) {
  static const std::map<std::string, std::string> names = {{"BT", "tokens"}, {"H", "hidden"}, {"V", "vocab"}};
  Json out = Json::object();
  for (const auto& [key, value] : params.items()) {
    const auto renamed = names.find(key);
    const std::string name = renamed == names.end() ? key : renamed->second;
    out[name] = name == "dtype" && value.is_string() ? Json(short_dtype(value.get<std::string>())) : value;
  }
  return out;
}

std::string liger_shape_slug(const Json& params) {
  Json shape = Json::object();
  for (const auto& [key, value] : params.items())
    if (key == "dtype" || (value.is_number_integer() && value.get<std::int64_t>() > 0)) shape[key] = value;
  return workload_slug(shape);
}

ImportedFile import_liger_csv(std::string_view text, const std::string& file_label, const KernelTitles& titles) {
  CsvTable table;
  try {
    table = parse_csv(text);
  } catch (const CsvError& e) { throw ImportInputError(fmt::format("{}:{}: {}", file_label, e.line(), e.what())); }
  const RowReader reader(table, file_label);
  ImportedFile out;
  out.sweep_name = kSweepName;
  out.rows = table.rows.size();
  std::vector<LigerRow> rows;
  std::unordered_map<std::string, std::size_t> first_line_of;  // a row's fields -> the line it first appears on
  for (const CsvRecord& record : table.rows) {
    auto read = reader.read(record);
    if (auto* reason = std::get_if<std::string>(&read)) {
      out.skipped.push_back({record.line, std::move(*reason)});
      continue;
    }
    LigerRow& row = std::get<LigerRow>(read);
    if (const auto [at, first] = first_line_of.try_emplace(row.fields, row.line); !first) {
      out.skipped.push_back({record.line, "an exact copy of an earlier row"});
      continue;
    }
    rows.push_back(std::move(row));
  }
  const std::vector<std::string> ids = distinct_external_ids(rows);
  const std::vector<std::string> names = run_names(ids);
  DocumentCache cache;
  out.runs.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    out.runs.push_back(imported_run(rows[i], ids[i], names[i], cache, titles));
  return out;
}

}  // namespace ks
