#pragma once
// kernelindex documents (apiVersion kernelindex.dev/v1alpha1): one object per run,
//   {run: BenchmarkRun, protocol: BenchmarkProtocol, environment: ExecutionEnvironment,
//    workload: Workload, implementation: Implementation},
// shaped like the seed document (tests/data/seed/000_dd8fd397e3a8b2f1.txt, a copy of the shared
// seed). docs/kernelindex.md describes every field. A run cites the other four by digest: "sha256:"
// + SHA-256 of the canonical JSON of {apiVersion, kind, spec}, metadata left out, so a title or
// name can change without changing what a figure is comparable with.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "env/environment.h"
#include "kernels/kernel.h"
#include "store/stored_run.h"

namespace ks {

using Json = nlohmann::json;

inline constexpr const char* kKernelindexApiVersion = "kernelindex.dev/v1alpha1";
inline constexpr std::size_t kMaxMetadataNameLength = 100;

// {apiVersion, kind, metadata, spec}: a document of ours of that kind.
Json kernelindex_document(const char* kind, Json metadata, Json spec);

// "sha256:" + hex SHA-256 of canonical_json({apiVersion, kind, spec}) of a document.
std::string document_digest(const Json& document);

// Lowercase, [a-z0-9-] only: "(R)" and "(TM)" dropped, every other run of characters outside
// [a-z0-9] becomes one '-', no '-' at either end. "NVIDIA A100-SXM4-80GB" -> "nvidia-a100-sxm4-80gb".
std::string slugify(std::string_view text);

// One externalId segment, as the seed writes them: letters (lowercased), digits, '_', '.' and '-'
// kept, anything else '-'. Liger's imported runs are named with it too.
std::string id_segment(std::string_view text);

// slugify(text), at most kMaxMetadataNameLength characters. A longer slug keeps its head and ends in
// '-' + the first 10 hex digits of the SHA-256 of the whole slug, so names that differ only past the
// cut stay distinct.
std::string metadata_name(std::string_view text);

// The parameters as a slug, as in the seed's "hidden4096-tokens1024-vocab128256-bf16": every
// non-string parameter as name+value (numbers as canonical JSON writes them, booleans true/false) in
// key order, then every string parameter's value in key order. Characters that would break an
// externalId ('/', whitespace) become '-'.
std::string workload_slug(const Json& params);

// "nvidia-h200" (slug of the GPU name) on a GPU rank, "cpu-" + slug of the CPU model on a CPU rank.
std::string hardware_slug(const HostInfo& host, const GpuInfo& gpu);

// An ISO 8601 UTC time ("2025-06-27T09:21:16Z", "...16.123456Z", "...+00:00") written with
// milliseconds and Z: "2025-06-27T09:21:16.000Z". Throws std::invalid_argument naming the text.
std::string iso_utc_milliseconds(const std::string& timestamp);
// "2025-06-27T09:21:16.000Z" -> "2025-06-27-09-21-16" (the externalId's last segment).
std::string timestamp_slug(const std::string& timestamp);

// BenchmarkProtocol from ks::protocol_to_json(protocol): the protocol's parameters go into
// spec.measurement verbatim beside timer and primaryStatistic.
Json protocol_document(const Json& protocol);

// ExecutionEnvironment whose spec is environment_spec(host, gpu); `python` (what the Python worker
// says of its interpreter and packages), when not null, goes into spec.software.python. `calibration`
// (what the rank's devices measurably do: calibration/calibration.h), when not null, goes into
// metadata.calibration, which the digest leaves out: two runs on one machine stay comparable while
// their calibrations differ by the noise of measuring.
Json environment_document(const HostInfo& host, const GpuInfo& gpu, const Json& python = nullptr,
                          const Json& calibration = nullptr);

// Workload: spec {kernel, parameters}; params is the point's parameter object (defaults filled in).
Json workload_document(const std::string& kernel, const std::string& kernel_title, const Json& params);
// The same, given workload_slug(params) already made (the run that cites it needs it too).
Json workload_document(const std::string& kernel, const std::string& kernel_title, const Json& params,
                       const std::string& slug);

// Implementation: spec {kernel, implementation, backend, build: {compiler, flags, [cudaCompiler,
// cudaArchitectures on cuda], libraries}, [plugin: {name, version, sha256}]}; build facts from
// build_info.h, libraries as given ({"cublasLt": "13.0.0", ...}; see implementation_libraries). An
// implementation from a plugin names the plugin, its version and the SHA-256 of its library file
// (the build facts are then kernelsweep's, not the plugin's).
Json implementation_document(const std::string& kernel, const std::string& implementation, const std::string& backend,
                             const Json& libraries, const Origin& origin = {});

// Implementation of a Python implementation: spec {kernel, implementation, backend (where it ran: cuda
// or cpu), python: {module, sha256 (of its source file), packages: {distribution: version}}}, from what
// the Python worker says (`provenance`: module, sha256, packages). A module of the user's names its
// origin (version) too; kernelsweep's own Python implementations have an empty origin.
Json python_implementation_document(const std::string& kernel, const std::string& implementation,
                                    const std::string& backend, const Json& provenance, const Origin& origin = {});

// The library versions an implementation of `backend` runs with: {} on cpu; cudaRuntime, cublas and
// nccl from the worker's GpuInfo on cuda (each only where known).
Json implementation_libraries(const std::string& backend, const GpuInfo& gpu);

// What a BenchmarkRun needs beyond its RunRecord.
struct RunContext {
  std::string kernel_title;      // KernelSpec::title: "Chunked distillation cosine loss"
  std::string hardware_slug;     // hardware_slug(host, gpu) of the rank that ran it
  std::string workload_slug;     // workload_slug(point params)
  Json labels = Json::object();  // added to the run's labels: {"liger_version": "0.5.10"}
  int cpus_allowed = 0;          // HostInfo::cpus_allowed of the rank that ran it (0: unknown, not written)
};

// BenchmarkRun of one record, citing the four documents by the digests in `cited` (document_digest
// of each). Its sourceNative.metrics are the record's metric fields (run_record_fields). Throws
// std::invalid_argument (naming the point id) for an unknown status or a missing or malformed
// ended_at/started_at.
Json benchmark_run_document(const RunRecord& record, const Citations& cited, const RunContext& context);
// The same document as its compact text (what dump() of the document gives, written without making
// the document), with its metadata.name.
struct RunDocumentText {
  std::string text;
  std::string name;
};
RunDocumentText benchmark_run_text(const RunRecord& record, const Citations& cited, const RunContext& context);

// A record's documents as made beside it, on the rank that measured it: what its run cites, the run
// document's compact text and name, the workload document's compact text. The documents it cites by
// digest beside its workload (protocol, environment, implementation) are the same for many runs:
// rank 0 holds each once, and writes them beside the texts.
struct RecordDocuments {
  Citations cited;
  RunDocumentText run;
  std::string workload;
};

// Whether a JSON value is a kernelindex object of ours: {run, ...} with run.apiVersion ours.
bool is_kernelindex_object(const Json& object);
// The point a run document measured (run.spec.sourceNative.pointId); "-" when it names none.
std::string run_point_id(const Json& run);

// The documents a run cites, complete (apiVersion, kind, metadata, spec).
struct CitedDocuments {
  Json protocol, environment, workload, implementation;
};

// {run, protocol, environment, workload, implementation}: what the DocumentWriter writes. Takes its
// arguments by value: pass temporaries (or std::move) and nothing is copied.
Json kernelindex_object(Json run, CitedDocuments cited);

// Where a kernelindex object's digests disagree with the documents it carries: one line per
// mismatch ("run.spec.protocolDigest is sha256:..., protocol digests to sha256:..."); empty if none.
std::vector<std::string> digest_mismatches(const Json& object);

// --- a BenchmarkRun's figures beyond its median latency (run_measurements.cpp) ------------------------
// spec.measurements (the protocol's quantiles, device memory, the GPU's state, noise, speed of light,
// energy) and spec.sourceNative.metrics (every metric field of the record: record/run_record.h).

// Timed: the point has repetitions (a crashed, timed-out or skipped point has none).
inline bool has_timing(const RunRecord& record) { return record.n_repeat > 0; }

// Latencies are whole nanoseconds in the documents.
inline std::int64_t whole_ns(double ns) { return std::llround(ns); }

// The latencies beside the median (which timing.latencyNs holds): the quantiles the protocol asked
// for, or where a record has none (a row from before they were stored, an import), p20 and p80; then
// the other figures the record has. A JSON array, its objects' keys in the order written.
std::string run_measurements(const RunRecord& record);

// The record's metric fields: all of them when the point was timed, else those it has (a peak of
// device memory); non-finite figures have no JSON form and are left out. A JSON object.
std::string native_metrics(const RunRecord& record);

}  // namespace ks
