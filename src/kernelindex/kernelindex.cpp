#include "kernelindex/kernelindex.h"

#include <cmath>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "build_info.h"
#include "common/canonical_json.h"
#include "common/digest.h"
#include "common/json_text.h"

namespace ks {
namespace {

// The hex part of a digest, first n digits: names use it to tell documents apart.
std::string digest_head(const std::string& digest, std::size_t n) {
  const auto colon = digest.find(':');
  return digest.substr(colon == std::string::npos ? 0 : colon + 1, n);
}

// "-O3 -march=x   -DNDEBUG " -> "-O3 -march=x -DNDEBUG": CMake joins empty variables with spaces.
std::string collapse_spaces(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// ASCII only, without the locale lookups of <cctype>: names and ids are ASCII by construction.
char lower_ascii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum_ascii(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Removes every case-insensitive occurrence of `mark` ("(r)", "(tm)") from lowercase text.
void erase_all(std::string& text, std::string_view mark) {
  for (auto at = text.find(mark); at != std::string::npos; at = text.find(mark, at)) text.erase(at, mark.size());
}

// "2025-06-27T09:21:16.000Z" (as iso_utc_milliseconds writes it) -> "2025-06-27-09-21-16".
std::string slug_of_iso(const std::string& iso) {
  std::string out = iso.substr(0, 19);
  out[10] = out[13] = out[16] = '-';
  return out;
}

std::string run_status(const RunRecord& record) {
  if (record.status == "error") return "failed";  // kernelindex has no "error": the kernel failed
  for (const char* known : kStatuses)
    if (record.status == known) return record.status;
  throw std::invalid_argument(
      fmt::format("run record {}: unknown status '{}' (expected one of passed, failed, error, crashed, "
                  "timeout, skipped)",
                  record.point_id, record.status));
}

std::string observed_at(const RunRecord& record) {
  const std::string& when = record.ended_at.empty() ? record.started_at : record.ended_at;
  if (when.empty())
    throw std::invalid_argument(fmt::format("run record {}: neither ended_at nor started_at is set", record.point_id));
  try {
    return iso_utc_milliseconds(when);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("run record {}: {}", record.point_id, e.what()));
  }
}

// The time is to the second: the repetitions of a point (a protocol's `repetitions`) measured within
// one second are told apart by their number.
std::string external_id(const RunRecord& record, const RunContext& context, const std::string& observed) {
  const std::string repetition = record.repetition > 0 ? fmt::format("-r{}", record.repetition) : "";
  return fmt::format("{}/{}/{}/{}/{}/{}{}", id_segment(record.kernel), id_segment(record.mode),
                     id_segment(record.implementation), context.hardware_slug, context.workload_slug,
                     slug_of_iso(observed), repetition);
}

std::string source_native(const RunRecord& record, const RunContext& context, const std::string& external) {
  JsonObjectText native;
  native.add_string("source", "kernelsweep")
      .add_string("benchmark", fmt::format("{}/{}", record.kernel, record.mode))
      .add_string("externalId", external)
      .add("metrics", native_metrics(record))
      .add_string("status", record.status)
      .add_string("pointId", record.point_id)
      .add_number("repetition", record.repetition)
      .add_number("rank", record.rank)
      .add_string("host", record.host);
  if (context.cpus_allowed > 0) native.add_number("cpusAllowed", context.cpus_allowed);
  if (!record.gpu_uuid.empty()) native.add_string("gpuUuid", record.gpu_uuid);
  if (gpu_state_was_read(record))
    native.add("throttleReasons", JsonObjectText()
                                      .add_string("start", throttle_reason_names(record.gpu_start.throttle_reasons))
                                      .add_string("end", throttle_reason_names(record.gpu_end.throttle_reasons))
                                      .text());
  if (!record.started_at.empty()) native.add_string("startedAt", record.started_at);
  if (!record.flags.empty()) native.add_string("flags", record.flags);
  return native.text();
}

std::string run_spec(const RunRecord& record, const Citations& cited, const RunContext& context,
                     const std::string& observed, const std::string& external) {
  JsonObjectText spec;
  spec.add_string("status", run_status(record)).add_string("observedAt", observed);
  if (!record.message.empty()) spec.add_string("message", record.message);
  if (has_timing(record))
    spec.add("timing", fmt::format("{{\"latencyNs\":{{\"median\":{}}},\"primaryStatistic\":\"median\"}}",
                                   whole_ns(record.stats.median_ns)));
  spec.add("measurements", run_measurements(record))
      .add("sourceNative", source_native(record, context, external))
      .add_string("protocolDigest", cited.protocol_digest)
      .add_string("environmentDigest", cited.environment_digest)
      .add_string("workloadDigest", cited.workload_digest)
      .add_string("implementationDigest", cited.implementation_digest);
  return spec.text();
}

void put_if_set(Json& object, const char* key, std::string_view value) {
  if (!value.empty()) object[key] = value;
}

}  // namespace

Json kernelindex_document(const char* kind, Json metadata, Json spec) {
  return {{"apiVersion", kKernelindexApiVersion},
          {"kind", kind},
          {"metadata", std::move(metadata)},
          {"spec", std::move(spec)}};
}

std::string id_segment(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) out += (is_alnum_ascii(c) || c == '_' || c == '.' || c == '-') ? lower_ascii(c) : '-';
  return out;
}

std::string document_digest(const Json& document) {
  // content_digest({apiVersion, kind, spec}) without copying the spec into a new object: the
  // canonical text of a three-key object is its keys in sorted order, which this writes directly.
  std::string text = "{\"apiVersion\":";
  text += canonical_json(document.at("apiVersion"));
  text += ",\"kind\":";
  text += canonical_json(document.at("kind"));
  text += ",\"spec\":";
  text += canonical_json(document.at("spec"));
  text += '}';
  return "sha256:" + sha256_hex(text);
}

std::string slugify(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = lower_ascii(c);
  erase_all(lower, "(r)");
  erase_all(lower, "(tm)");
  std::string out;
  for (char c : lower) {
    if (is_alnum_ascii(c)) out += c;
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  if (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

std::string metadata_name(std::string_view text) {
  std::string slug = slugify(text);
  if (slug.size() <= kMaxMetadataNameLength) return slug;
  const std::string suffix = sha256_hex(slug).substr(0, 10);
  std::string head = slug.substr(0, kMaxMetadataNameLength - suffix.size() - 1);
  while (!head.empty() && head.back() == '-') head.pop_back();
  return head + "-" + suffix;
}

std::string workload_slug(const Json& params) {
  std::string numbers, strings;
  for (const auto& [key, value] : params.items()) {
    if (value.is_string()) {
      strings += '-';
      strings += id_segment(value.get_ref<const std::string&>());
    } else {
      numbers += '-';
      numbers += id_segment(key);
      numbers += id_segment(canonical_json(value));  // floats in their ECMAScript form
    }
  }
  std::string out = numbers + strings;
  return out.empty() ? out : out.substr(1);
}

std::string hardware_slug(const HostInfo& host, const GpuInfo& gpu) {
  if (gpu.index >= 0) return slugify(gpu.name);
  return "cpu-" + slugify(host.cpu_model.empty() ? host.architecture : host.cpu_model);
}

std::string iso_utc_milliseconds(const std::string& timestamp) {
  // YYYY-MM-DDTHH:MM:SS: digits where the pattern has 'd', the pattern's own character elsewhere.
  static constexpr std::string_view pattern = "dddd-dd-ddTdd:dd:dd";
  const std::string_view text = timestamp;
  bool shaped = text.size() >= pattern.size();
  for (std::size_t i = 0; shaped && i < pattern.size(); ++i)
    shaped = pattern[i] == 'd' ? is_digit(text[i]) : text[i] == pattern[i];
  if (!shaped)
    throw std::invalid_argument(fmt::format("'{}' is not an ISO 8601 time (YYYY-MM-DDTHH:MM:SS[.fff]Z)", timestamp));
  std::string_view rest = text.substr(pattern.size());
  std::string millis = "000";
  if (!rest.empty() && rest.front() == '.') {
    rest.remove_prefix(1);
    std::size_t digits = 0;
    while (digits < rest.size() && is_digit(rest[digits])) ++digits;
    for (std::size_t i = 0; i < 3 && i < digits; ++i) millis[i] = rest[i];
    rest.remove_prefix(digits);
  }
  if (rest != "Z" && rest != "+00:00")
    throw std::invalid_argument(fmt::format("'{}' is not a UTC time (it must end in Z or +00:00)", timestamp));
  std::string out(text.substr(0, pattern.size()));
  out += '.';
  out += millis;
  out += 'Z';
  return out;
}

std::string timestamp_slug(const std::string& timestamp) { return slug_of_iso(iso_utc_milliseconds(timestamp)); }

// What each protocol's figures are, in a sentence or two: the BenchmarkProtocol's comparability notes.
std::string comparability_notes(const std::string& protocol) {
  const char* what =
      protocol == "cold"
          ? "Timed as NVBench's cold measurement: per sample a cache flush, the stream held until the call is "
            "queued, one start and end mark, the SM clock read; samples of a slowed GPU dropped; sampling stops "
            "on a noise goal or a timeout, quantiles by linear interpolation (median primary)."
      : protocol == "graph"
          ? "Timed as triton.testing.do_bench_cudagraph times: the calls captured into a CUDA graph, each replay "
            "timed and divided by its calls (with a flush: one call a replay, a flush before each), quantiles "
            "by linear interpolation (median primary)."
          : "Timed as triton.testing.do_bench times: warm-up and repetition counts from a 5-call estimate, "
            "a cache flush before every timed call, one start and end mark around each call, quantiles by "
            "linear interpolation (median primary, p20/p80 spread).";
  return std::string(what) +
         " Every parameter is in measurement. Comparable only within one kernel, workload, implementation and "
         "environment.";
}

Json protocol_document(const Json& protocol) {
  Json measurement = protocol.is_object() ? protocol : Json::object();
  const std::string name = measurement.value("name", "do_bench");
  const std::string timer = measurement.value("timer", "");
  measurement["timer"] = timer;
  // kernelindex spells it primaryStatistic; accept the snake-case spelling once, never keep both.
  if (!measurement.contains("primaryStatistic"))
    measurement["primaryStatistic"] = measurement.value("primary_statistic", "median");
  measurement.erase("primary_statistic");
  Json spec = {{"harness", {{"name", "kernelsweep"}, {"version", build::version}}},
               {"measurement", measurement},
               {"comparability", {{"family", "kernelsweep_" + name}, {"notes", comparability_notes(name)}}}};
  Json doc = kernelindex_document("BenchmarkProtocol", Json::object(), std::move(spec));
  const std::string digest = document_digest(doc);
  doc["metadata"] = {{"name", metadata_name(fmt::format("kernelsweep-{}-{}-{}", name, timer, digest_head(digest, 8)))},
                     {"title", fmt::format("kernelsweep {} · {}", name, timer.empty() ? "unknown timer" : timer)}};
  return doc;
}

Json environment_document(const HostInfo& host, const GpuInfo& gpu, const Json& python, const Json& calibration) {
  Json spec = environment_spec(host, gpu);
  if (!python.is_null()) spec["software"]["python"] = python;
  Json doc = kernelindex_document("ExecutionEnvironment", Json::object(), std::move(spec));
  const std::string digest = document_digest(doc);
  const std::string machine = gpu.index >= 0 ? gpu.name : host.cpu_model;
  doc["metadata"] = {
      {"name", metadata_name(fmt::format("kernelsweep-{}-{}", hardware_slug(host, gpu), digest_head(digest, 8)))},
      {"title", fmt::format("kernelsweep host · {}", machine.empty() ? "unknown machine" : machine)}};
  if (!calibration.is_null()) doc["metadata"]["calibration"] = calibration;
  return doc;
}

Json workload_document(const std::string& kernel, const std::string& kernel_title, const Json& params) {
  return workload_document(kernel, kernel_title, params, workload_slug(params));
}

Json workload_document(const std::string& kernel, const std::string& kernel_title, const Json& params,
                       const std::string& slug) {
  return kernelindex_document("Workload",
                              {{"name", metadata_name(fmt::format("{}-{}", kernel, slug))},
                               {"title", fmt::format("{} · {}", kernel_title.empty() ? kernel : kernel_title, slug)}},
                              {{"kernel", kernel}, {"parameters", params}});
}

Json implementation_document(const std::string& kernel, const std::string& implementation, const std::string& backend,
                             const Json& libraries, const Origin& origin) {
  Json build = {{"compiler", build::compiler}, {"flags", collapse_spaces(build::cxx_flags)}, {"libraries", libraries}};
  // A cpu implementation does not depend on how the CUDA code was built: keep those facts out of its
  // digest.
  if (backend == "cuda") {
    put_if_set(build, "cudaCompiler", build::cuda_compiler);
    put_if_set(build, "cudaArchitectures", build::cuda_architectures);
  }
  Json spec = {{"kernel", kernel}, {"implementation", implementation}, {"backend", backend}, {"build", build}};
  std::string name = fmt::format("{}-{}-{}", kernel, implementation, backend);
  std::string title = fmt::format("{} · {} ({})", kernel, implementation, backend);
  if (!origin.plugin.empty()) {
    spec["plugin"] = {{"name", origin.plugin}, {"version", origin.version}, {"sha256", origin.sha256}};
    name += "-" + origin.plugin;
    title += fmt::format(" · plugin {} {}", origin.plugin, origin.version);
  }
  return kernelindex_document("Implementation", {{"name", metadata_name(name)}, {"title", title}}, std::move(spec));
}

Json implementation_libraries(const std::string& backend, const GpuInfo& gpu) {
  Json libraries = Json::object();
  if (backend != "cuda") return libraries;
  if (!gpu.cuda_runtime_version.empty()) libraries["cudaRuntime"] = gpu.cuda_runtime_version;
  if (!gpu.cublas_version.empty()) libraries["cublas"] = gpu.cublas_version;
  if (!gpu.nccl_version.empty()) libraries["nccl"] = gpu.nccl_version;
  return libraries;
}

Json python_implementation_document(const std::string& kernel, const std::string& implementation,
                                    const std::string& backend, const Json& provenance, const Origin& origin) {
  // The source's path differs from host to host; its SHA-256 says what ran.
  Json python = {{"module", provenance.value("module", origin.plugin)},
                 {"sha256", provenance.value("sha256", origin.sha256)},
                 {"packages", provenance.value("packages", Json::object())}};
  if (!origin.version.empty()) python["version"] = origin.version;
  Json spec = {
      {"kernel", kernel}, {"implementation", implementation}, {"backend", backend}, {"python", std::move(python)}};
  const std::string module = spec["python"]["module"].get<std::string>();
  return kernelindex_document(
      "Implementation",
      {{"name", metadata_name(fmt::format("{}-{}-{}-python", kernel, implementation, backend))},
       {"title", fmt::format("{} · {} ({}) · Python module {}", kernel, implementation, backend, module)}},
      std::move(spec));
}

RunDocumentText benchmark_run_text(const RunRecord& record, const Citations& cited, const RunContext& context) {
  const std::string observed = observed_at(record);
  const std::string external = external_id(record, context, observed);
  RunDocumentText run{{}, metadata_name("kernelsweep-" + external)};
  JsonObjectText run_labels;
  run_labels.add_string("kernelsweep_version", build::version).add_string("kernelsweep_commit", build::git_commit);
  for (const auto& [label, value] : context.labels.items()) run_labels.add(label, json_text(value));
  const std::string title =
      fmt::format("{} · {} · {}", context.kernel_title.empty() ? record.kernel : context.kernel_title,
                  record.implementation, record.mode);
  const std::string metadata =
      JsonObjectText().add("labels", run_labels.text()).add_string("name", run.name).add_string("title", title).text();
  run.text = JsonObjectText()
                 .add_string("apiVersion", kKernelindexApiVersion)
                 .add_string("kind", "BenchmarkRun")
                 .add("metadata", metadata)
                 .add("spec", run_spec(record, cited, context, observed, external))
                 .text();
  return run;
}

Json benchmark_run_document(const RunRecord& record, const Citations& cited, const RunContext& context) {
  return Json::parse(benchmark_run_text(record, cited, context).text);
}

Json kernelindex_object(Json run, CitedDocuments cited) {
  Json object = Json::object();
  object["run"] = std::move(run);
  object["protocol"] = std::move(cited.protocol);
  object["environment"] = std::move(cited.environment);
  object["workload"] = std::move(cited.workload);
  object["implementation"] = std::move(cited.implementation);
  return object;
}

std::vector<std::string> digest_mismatches(const Json& object) {
  static const std::pair<const char*, const char*> citations[] = {{"protocol", "protocolDigest"},
                                                                  {"environment", "environmentDigest"},
                                                                  {"workload", "workloadDigest"},
                                                                  {"implementation", "implementationDigest"}};
  std::vector<std::string> problems;
  const Json& spec = object.at("run").at("spec");
  for (const auto& [document_key, digest_key] : citations) {
    const std::string cited = spec.value(digest_key, "");
    if (!object.contains(document_key)) {
      problems.push_back(
          fmt::format("run.spec.{} cites a {} document the object does not carry", digest_key, document_key));
      continue;
    }
    const std::string actual = document_digest(object.at(document_key));
    if (cited != actual)
      problems.push_back(fmt::format("run.spec.{} is {}, {} digests to {}", digest_key, cited, document_key, actual));
  }
  return problems;
}

bool is_kernelindex_object(const Json& object) {
  return object.is_object() && object.contains("run") && object["run"].is_object() &&
         object["run"].value("apiVersion", "") == kKernelindexApiVersion;
}

std::string run_point_id(const Json& run) {
  const Json* value = &run;
  for (const char* key : {"spec", "sourceNative", "pointId"}) {
    if (!value->is_object() || !value->contains(key)) return "-";
    value = &(*value)[key];
  }
  return value->is_string() && !value->get_ref<const std::string&>().empty() ? value->get<std::string>() : "-";
}

}  // namespace ks
