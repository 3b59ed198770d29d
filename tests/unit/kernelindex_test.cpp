#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "build_info.h"
#include "common/canonical_json.h"
#include "common/digest.h"
#include "common/json_text.h"
#include "kernelindex/document_reader.h"
#include "kernelindex/document_writer.h"
#include "kernelindex/kernelindex.h"
#include "measure/do_bench.h"
#include "measure/measurement.h"
#include "support/cli_runner.h"
#include "support/h200_node.h"

namespace {

using ks::Json;
using ks::testing::read_text;

// The seed file starts with a line naming its source ("Liger") before the JSON.
Json seed_document() {
  const std::string text = read_text(KS_SEED_DOCUMENT);
  const auto brace = text.find('{');
  if (brace == std::string::npos) throw std::runtime_error("no JSON object in " + std::string(KS_SEED_DOCUMENT));
  return Json::parse(text.substr(brace));
}

// Every key path of a value: "run.spec.timing.latencyNs.median", "run.spec.measurements[].unit".
void collect_paths(const Json& value, const std::string& prefix, std::set<std::string>& paths) {
  if (value.is_object()) {
    for (const auto& [key, item] : value.items()) {
      const std::string path = prefix.empty() ? key : prefix + "." + key;
      paths.insert(path);
      collect_paths(item, path, paths);
    }
  } else if (value.is_array()) {
    for (const auto& item : value) collect_paths(item, prefix + "[]", paths);
  }
}

std::set<std::string> key_paths(const Json& value) {
  std::set<std::string> paths;
  collect_paths(value, "", paths);
  return paths;
}

// Maps whose keys each source names for itself (the seed's liger_version label and ms_50 metric are
// kernelsweep's kernelsweep_version and median_ns): the map must be there, its keys are the source's.
bool inside_source_defined_map(const std::string& path) {
  for (const std::string map : {"run.metadata.labels.", "run.spec.sourceNative.metrics."})
    if (path.rfind(map, 0) == 0) return true;
  return false;
}

std::vector<std::string> missing_paths(const Json& reference, const Json& candidate) {
  const auto ours = key_paths(candidate);
  std::vector<std::string> missing;
  for (const auto& path : key_paths(reference))
    if (!ours.count(path) && !inside_source_defined_map(path)) missing.push_back(path);
  return missing;
}

// The seed's key paths that `object` lacks. The harness's repository is left out: kernelsweep writes
// none (it has no public repository).
std::vector<std::string> missing_seed_paths(const Json& object) {
  std::vector<std::string> missing = missing_paths(seed_document(), object);
  std::erase(missing, "protocol.spec.harness.repository");
  return missing;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);) parts.push_back(part);
  return parts;
}

bool is_metadata_name(const std::string& name) {
  return name.size() <= ks::kMaxMetadataNameLength && std::regex_match(name, std::regex("[a-z0-9]+(-[a-z0-9]+)*"));
}

// A realistic run: the seed's workload (distillation cosine loss, full pass) timed by kernelsweep on
// an H200.
struct Fixture {
  ks::HostInfo host;
  ks::GpuInfo gpu;
  Json params;
  ks::RunRecord record;
  ks::Citations digests;
  ks::CitedDocuments cited;
  ks::RunContext context;
  Json run;
  Json object;
};

ks::RunRecord passed_record(const Json& params) {
  // The seed's figures as its source measured them (ms_20, ms_50, ms_80), off whole nanoseconds: the
  // run document rounds its latencies and keeps the native metrics as they are.
  ks::Statistics stats = ks::testing::seed_statistics();
  stats.median_ns = 14654463.7;
  stats.p20_ns = 14633983.8;
  stats.p80_ns = 14680064.2;
  ks::RunRecord r = ks::testing::distill_run_record(params, stats);
  r.mode = "full";
  r.rank = 1;
  r.started_at = "2026-11-30T12:00:00.250Z";
  r.ended_at = "2026-11-30T12:00:01.750Z";
  return r;
}

Fixture make_fixture(const std::string& status = "passed") {
  Fixture f;
  f.host.hostname = "gpu-node-017";
  f.host.cpu_vendor = "intel";
  f.host.cpu_model = "Intel(R) Xeon(R) Platinum 8480+";
  f.host.cpu_cores = 112;
  f.host.architecture = "x86_64";
  f.host.os = "Ubuntu 24.04.3 LTS";
  f.host.mpi_version = "Open MPI v4.1.6";
  f.gpu.index = 0;
  f.gpu.name = "NVIDIA H200";
  f.gpu.uuid = "GPU-3b1f9c2e-8d4a-4f6b-9e21-7c5d0a8b6f13";
  f.gpu.architecture = "sm_90";
  f.gpu.memory_bytes = 150109880320;
  f.gpu.multiprocessors = 132;
  f.gpu.cuda_runtime_version = "13.0";
  f.gpu.cublas_version = "13.1.0";
  f.params = {{"tokens", 1024},     {"hidden", 4096},     {"vocab", 128256},      {"dtype", "bf16"}, {"beta", 0.5},
              {"temperature", 1.0}, {"chunk_size", 1024}, {"ignore_index", -100}, {"bias", false}};
  f.record = passed_record(f.params);
  f.record.status = status;
  f.cited.protocol = ks::protocol_document(ks::testing::do_bench_gpu_protocol());
  f.cited.environment = ks::environment_document(f.host, f.gpu);
  f.cited.workload = ks::workload_document("distill_cosine_loss", "Chunked distillation cosine loss", f.params);
  f.cited.implementation =
      ks::implementation_document("distill_cosine_loss", "fused", "cuda", ks::implementation_libraries("cuda", f.gpu));
  f.digests = {ks::document_digest(f.cited.protocol), ks::document_digest(f.cited.environment),
               ks::document_digest(f.cited.workload), ks::document_digest(f.cited.implementation)};
  f.context = {"Chunked distillation cosine loss", ks::hardware_slug(f.host, f.gpu), ks::workload_slug(f.params)};
  f.run = ks::benchmark_run_document(f.record, f.digests, f.context);
  f.object = ks::kernelindex_object(f.run, f.cited);
  return f;
}

// Writes `run` citing `cited`, its documents cited as the sweep cites them (ks::cite).
void write(ks::DocumentWriter& writer, const Json& run, const ks::CitedDocuments& cited) {
  const ks::CitedDocument protocol = ks::cite(cited.protocol), environment = ks::cite(cited.environment),
                          implementation = ks::cite(cited.implementation);
  writer.write(run, {protocol, environment, ks::json_text(cited.workload), implementation});
}

std::filesystem::path fresh_folder(const std::string& name) {
  const auto dir = std::filesystem::path(KS_BINARY_DIR) / "test_output" / name;
  std::filesystem::remove_all(dir);
  return dir;
}

// The first ```json block of a markdown file.
Json first_json_block(const std::filesystem::path& markdown) {
  const std::string text = read_text(markdown);
  const auto open = text.find("```json\n");
  if (open == std::string::npos) throw std::runtime_error("no ```json block in " + markdown.string());
  const auto start = open + 8;
  const auto close = text.find("\n```", start);
  return Json::parse(text.substr(start, close - start));
}

TEST(Kernelindex, DigestRuleReproducesTheSeedDigests) {
  const Json seed = seed_document();
  EXPECT_EQ(ks::document_digest(seed["protocol"]), seed["run"]["spec"]["protocolDigest"]);
  EXPECT_EQ(ks::document_digest(seed["environment"]), seed["run"]["spec"]["environmentDigest"]);
}

TEST(Kernelindex, DocumentDigestIsTheContentDigestOfApiVersionKindAndSpec) {
  const Fixture f = make_fixture();
  for (const char* key : {"protocol", "environment", "workload", "implementation", "run"}) {
    const Json& doc = f.object[key];
    EXPECT_EQ(ks::document_digest(doc),
              ks::content_digest({{"apiVersion", doc["apiVersion"]}, {"kind", doc["kind"]}, {"spec", doc["spec"]}}))
        << key;
  }
}

TEST(Kernelindex, DigestCoversSpecButNotMetadata) {
  const Json seed = seed_document();
  Json renamed = seed["protocol"];
  renamed["metadata"]["title"] = "another title";
  EXPECT_EQ(ks::document_digest(renamed), ks::document_digest(seed["protocol"]));
  Json changed = seed["protocol"];
  changed["spec"]["measurement"]["timer"] = "steady_clock";
  EXPECT_NE(ks::document_digest(changed), ks::document_digest(seed["protocol"]));
}

TEST(Kernelindex, OurObjectHasEverySeedKeyPath) {
  const Fixture f = make_fixture();
  const std::vector<std::string> missing = missing_seed_paths(f.object);
  EXPECT_TRUE(missing.empty()) << "missing: " << ::testing::PrintToString(missing);
  EXPECT_TRUE(f.object.contains("workload"));
  EXPECT_TRUE(f.object.contains("implementation"));
}

TEST(Kernelindex, EveryDigestRecomputesFromTheDocumentsCarried) {
  Fixture f = make_fixture();
  EXPECT_TRUE(ks::digest_mismatches(f.object).empty()) << ::testing::PrintToString(ks::digest_mismatches(f.object));
  for (const char* key : {"protocol", "environment", "workload", "implementation"})
    EXPECT_EQ(f.object[key]["apiVersion"], ks::kKernelindexApiVersion) << key;
  f.object["workload"]["spec"]["parameters"]["tokens"] = 2048;
  const auto problems = ks::digest_mismatches(f.object);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("workloadDigest"), std::string::npos) << problems[0];
}

TEST(Kernelindex, RunDocumentCarriesTimingAndProvenance) {
  const Fixture f = make_fixture();
  const Json& spec = f.run["spec"];
  EXPECT_EQ(f.run["apiVersion"], ks::kKernelindexApiVersion);
  EXPECT_EQ(f.run["kind"], "BenchmarkRun");
  EXPECT_EQ(spec["status"], "passed");
  EXPECT_EQ(spec["timing"]["latencyNs"]["median"], std::llround(f.record.stats.median_ns));
  EXPECT_TRUE(spec["timing"]["latencyNs"]["median"].is_number_integer());
  EXPECT_EQ(spec["timing"]["primaryStatistic"], "median");
  EXPECT_EQ(spec["observedAt"], f.record.ended_at);
  ASSERT_EQ(spec["measurements"].size(), 3u);
  EXPECT_EQ(spec["measurements"][0]["statistic"], "p20");
  EXPECT_EQ(spec["measurements"][0]["value"], std::llround(f.record.stats.p20_ns));
  EXPECT_EQ(spec["measurements"][1]["statistic"], "p80");
  EXPECT_EQ(spec["measurements"][1]["value"], std::llround(f.record.stats.p80_ns));
  EXPECT_EQ(spec["measurements"][2]["metric"], "device_memory");
  EXPECT_EQ(spec["measurements"][2]["value"], f.record.device_peak_bytes);
  const Json& native = spec["sourceNative"];
  EXPECT_EQ(native["source"], "kernelsweep");
  EXPECT_EQ(native["benchmark"], "distill_cosine_loss/full");
  EXPECT_EQ(native["metrics"]["median_ns"], f.record.stats.median_ns);
  EXPECT_EQ(native["metrics"]["n_repeat"], f.record.n_repeat);
  EXPECT_EQ(native["gpuUuid"], f.record.gpu_uuid);
  EXPECT_EQ(native["pointId"], f.record.point_id);
  const auto id = split(native["externalId"], '/');
  ASSERT_EQ(id.size(), 6u) << native["externalId"];
  EXPECT_EQ(id[0], "distill_cosine_loss");
  EXPECT_EQ(id[1], "full");
  EXPECT_EQ(id[2], "fused");
  EXPECT_EQ(id[3], "nvidia-h200");
  EXPECT_EQ(id[4], ks::workload_slug(f.params));
  EXPECT_EQ(id[5], "2026-11-30-12-00-01");
  EXPECT_EQ(f.run["metadata"]["title"], "Chunked distillation cosine loss · fused · full");
  EXPECT_EQ(f.run["metadata"]["labels"]["kernelsweep_version"], ks::build::version);
  EXPECT_TRUE(is_metadata_name(f.run["metadata"]["name"])) << f.run["metadata"]["name"];
  for (const char* key : {"protocol", "environment", "workload", "implementation"})
    EXPECT_TRUE(is_metadata_name(f.object[key]["metadata"]["name"])) << f.object[key]["metadata"]["name"];
}

TEST(Kernelindex, ErrorBecomesFailedAndKeepsItsMessage) {
  Fixture f = make_fixture();
  f.record.status = "error";
  f.record.message = "CUDA error: out of memory";
  f.record.n_repeat = 0;
  f.record.device_peak_bytes = 0;
  const Json run = ks::benchmark_run_document(f.record, f.digests, f.context);
  EXPECT_EQ(run["spec"]["status"], "failed");
  EXPECT_EQ(run["spec"]["message"], "CUDA error: out of memory");
  EXPECT_EQ(run["spec"]["sourceNative"]["status"], "error");
  EXPECT_FALSE(run["spec"].contains("timing"));
  EXPECT_TRUE(run["spec"]["measurements"].empty());
}

// The GPU's state around the timed repetitions, as NVML read it (here: injected readings), is in the
// measurements and the native metrics, with the throttle reasons by name; a record without it
// (a CPU point, no NVML) has none of it.
TEST(Kernelindex, TheGpuStateReadIsMeasuredAndItsThrottleReasonsNamed) {
  Fixture f = make_fixture();
  const Json without = ks::benchmark_run_document(f.record, f.digests, f.context);
  EXPECT_FALSE(without["spec"]["sourceNative"].contains("throttleReasons"));
  EXPECT_FALSE(without["spec"]["sourceNative"]["metrics"].contains("sm_clock_mhz_start"));
  f.record.gpu_start = {1980, 3201, 402.5, 39, ks::throttle::kGpuIdle};
  f.record.gpu_end = {1635, 3201, 699.75, 52, ks::throttle::kSwPowerCap};
  const Json run = ks::benchmark_run_document(f.record, f.digests, f.context);
  std::map<std::string, double> measured;
  for (const Json& m : run["spec"]["measurements"])
    measured[m["metric"].get<std::string>() + "/" + m["statistic"].get<std::string>()] = m["value"];
  EXPECT_EQ(measured.at("sm_clock/start"), 1980);
  EXPECT_EQ(measured.at("sm_clock/end"), 1635);
  EXPECT_EQ(measured.at("memory_clock/end"), 3201);
  EXPECT_EQ(measured.at("power/end"), 699.75);
  EXPECT_EQ(measured.at("temperature/start"), 39);
  const Json& native = run["spec"]["sourceNative"];
  EXPECT_EQ(native["throttleReasons"], (Json{{"start", "gpu_idle"}, {"end", "sw_power_cap"}}));
  EXPECT_EQ(native["metrics"]["sm_clock_mhz_end"], 1635);
  EXPECT_EQ(native["metrics"]["throttle_reasons_end"], ks::throttle::kSwPowerCap);
}

TEST(Kernelindex, EveryStatusMapsToAKernelindexStatus) {
  const std::set<std::string> kernelindex{"passed", "failed", "crashed", "timeout", "skipped"};
  Fixture f = make_fixture();
  for (const char* status : ks::kStatuses) {
    f.record.status = status;
    EXPECT_TRUE(kernelindex.count(ks::benchmark_run_document(f.record, f.digests, f.context)["spec"]["status"]))
        << status;
  }
  f.record.status = "exploded";
  try {
    ks::benchmark_run_document(f.record, f.digests, f.context);
    FAIL() << "an unknown status was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(f.record.point_id), std::string::npos) << e.what();
  }
}

TEST(Kernelindex, SlugsFollowTheSeedsExternalId) {
  const auto seed_id = split(seed_document()["run"]["spec"]["sourceNative"]["externalId"], '/');
  ASSERT_EQ(seed_id.size(), 6u);
  EXPECT_EQ(ks::workload_slug({{"hidden", 4096}, {"tokens", 1024}, {"vocab", 128256}, {"dtype", "bf16"}}), seed_id[4]);
  ks::GpuInfo a100;
  a100.index = 0;
  a100.name = "NVIDIA A100-SXM4-80GB";
  EXPECT_EQ(ks::hardware_slug(ks::HostInfo{}, a100), seed_id[3]);
  EXPECT_EQ(ks::timestamp_slug(seed_document()["run"]["spec"]["observedAt"]), seed_id[5]);
  ks::HostInfo cpu_host;
  cpu_host.cpu_model = "Intel(R) Xeon(R) Platinum 8480+";
  EXPECT_EQ(ks::hardware_slug(cpu_host, ks::GpuInfo{}), "cpu-intel-xeon-platinum-8480");
}

TEST(Kernelindex, EnvironmentOfTheSeedsGpuMatchesItsHardware) {
  ks::GpuInfo a100;
  a100.index = 0;
  a100.name = "NVIDIA A100-SXM4-80GB";
  a100.architecture = "sm_80";
  const Json ours = ks::environment_document(ks::HostInfo{}, a100)["spec"]["hardware"];
  const Json seed = seed_document()["environment"]["spec"]["hardware"];
  for (const auto& [key, value] : seed.items()) EXPECT_EQ(ours.at(key), value) << key;
}

TEST(Kernelindex, MetadataNamesAreShortLowercaseAndDistinct) {
  EXPECT_EQ(ks::metadata_name("Distill_Cosine/Full -- NVIDIA H200"), "distill-cosine-full-nvidia-h200");
  const std::string stem(150, 'a');
  const std::string one = ks::metadata_name(stem + "-tokens1024");
  const std::string two = ks::metadata_name(stem + "-tokens2048");
  EXPECT_TRUE(is_metadata_name(one)) << one;
  EXPECT_TRUE(is_metadata_name(two)) << two;
  EXPECT_EQ(one.size(), ks::kMaxMetadataNameLength);
  EXPECT_NE(one, two);
  EXPECT_EQ(one.substr(0, 80), stem.substr(0, 80));
  EXPECT_EQ(ks::metadata_name(stem + "-tokens1024"), one) << "the cut must not depend on anything but the name";
}

TEST(Kernelindex, RunNamesOfLongWorkloadsStayDistinct) {
  Fixture f = make_fixture();
  Json other_params = f.params;
  other_params["ignore_index"] = -101;  // sorts after most keys, so it lands past the cut
  const ks::RunContext other{f.context.kernel_title, f.context.hardware_slug, ks::workload_slug(other_params)};
  const std::string a = f.run["metadata"]["name"];
  const std::string b = ks::benchmark_run_document(f.record, f.digests, other)["metadata"]["name"];
  EXPECT_TRUE(is_metadata_name(a)) << a;
  EXPECT_TRUE(is_metadata_name(b)) << b;
  EXPECT_NE(a, b);
}

TEST(Kernelindex, TimestampsAreWrittenWithMillisecondsAndZ) {
  EXPECT_EQ(ks::iso_utc_milliseconds("2025-06-27T09:21:16Z"), "2025-06-27T09:21:16.000Z");
  EXPECT_EQ(ks::iso_utc_milliseconds("2025-06-27T09:21:16.123456Z"), "2025-06-27T09:21:16.123Z");
  EXPECT_EQ(ks::iso_utc_milliseconds("2025-06-27T09:21:16.5+00:00"), "2025-06-27T09:21:16.500Z");
  EXPECT_THROW(ks::iso_utc_milliseconds("2025-06-27 09:21"), std::invalid_argument);
  EXPECT_THROW(ks::iso_utc_milliseconds("2025-06-27T09:21:16+02:00"), std::invalid_argument);
}

TEST(Kernelindex, ProtocolDocumentHoldsEveryProtocolParameter) {
  const Json protocol = ks::testing::do_bench_gpu_protocol();
  const Json doc = ks::protocol_document(protocol);
  EXPECT_EQ(doc["kind"], "BenchmarkProtocol");
  EXPECT_EQ(doc["spec"]["harness"]["name"], "kernelsweep");
  EXPECT_EQ(doc["spec"]["comparability"]["family"], "kernelsweep_do_bench");
  EXPECT_EQ(doc["spec"]["measurement"]["timer"], "cuda_events");
  EXPECT_EQ(doc["spec"]["measurement"]["primaryStatistic"], "median");
  for (const auto& [key, value] : protocol.items()) EXPECT_EQ(doc["spec"]["measurement"].at(key), value) << key;
  Json other = protocol;
  other["flush_bytes"] = 0;
  EXPECT_NE(ks::document_digest(ks::protocol_document(other)), ks::document_digest(doc));
}

TEST(Kernelindex, CpuImplementationsDoNotDependOnCudaBuildFacts) {
  const Json cpu =
      ks::implementation_document("gemm", "reference", "cpu", ks::implementation_libraries("cpu", ks::GpuInfo{}));
  EXPECT_FALSE(cpu["spec"]["build"].contains("cudaArchitectures"));
  EXPECT_TRUE(cpu["spec"]["build"]["libraries"].empty());
  EXPECT_EQ(cpu["spec"]["build"]["compiler"], ks::build::compiler);
  const Fixture f = make_fixture();
  const Json& cuda = f.cited.implementation["spec"];
  EXPECT_EQ(cuda["backend"], "cuda");
  EXPECT_EQ(cuda["build"].contains("cudaArchitectures"), std::string(ks::build::cuda_architectures).size() > 0);
  EXPECT_EQ(cuda["build"]["libraries"]["cublas"], f.gpu.cublas_version);
}

TEST(Kernelindex, JsonFormatWritesOneParseableFilePerRun) {
  const auto dir = fresh_folder("kernelindex_json");
  const Fixture f = make_fixture();
  ks::DocumentWriter writer(dir, "json");
  write(writer, f.run, f.cited);
  writer.flush();
  const auto path = dir / (f.run["metadata"]["name"].get<std::string>() + ".json");
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  EXPECT_EQ(Json::parse(read_text(path)), f.object);
  EXPECT_EQ(writer.written(), 1u);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1)
      << "no partial file may be left behind";
}

// Every document line of a folder, through the index (jsonl) or the files (json).
std::vector<std::string> document_lines(const std::filesystem::path& folder, const ks::DocumentFilter& filter = {}) {
  std::vector<std::string> lines;
  ks::for_each_document(folder, filter, [&](std::string_view line) { lines.emplace_back(line); });
  return lines;
}

TEST(Kernelindex, JsonlFormatWritesOneParseableLinePerRun) {
  const auto dir = fresh_folder("kernelindex_jsonl");
  const Fixture first = make_fixture();
  Fixture second = make_fixture("failed");
  second.run = ks::benchmark_run_document(second.record, second.digests, second.context);
  second.object = ks::kernelindex_object(second.run, second.cited);
  {
    ks::DocumentWriter writer(dir, "jsonl");
    write(writer, first.run, first.cited);
    write(writer, second.run, second.cited);
    writer.flush();
  }
  // Uncompressed, the shard is plain jsonl: one object a line, each its compact dump.
  const std::vector<std::string> lines = split(read_text(dir / "kernelindex-0000.jsonl"), '\n');
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(Json::parse(lines[0]), first.object);
  EXPECT_EQ(Json::parse(lines[1]), second.object);
  EXPECT_EQ(lines[1], second.object.dump());
  EXPECT_EQ(document_lines(dir), lines);
  {
    ks::DocumentWriter reopened(dir, "jsonl");  // a resumed run appends
    write(reopened, first.run, first.cited);
    reopened.flush();
  }
  EXPECT_EQ(split(read_text(dir / "kernelindex-0000.jsonl"), '\n').size(), 3u);
  EXPECT_EQ(document_lines(dir).size(), 3u);
}

TEST(Kernelindex, WriterRefusesUnknownFormatsAndNamelessRuns) {
  EXPECT_THROW(ks::DocumentWriter(fresh_folder("kernelindex_bad"), "yaml"), std::invalid_argument);
  ks::DocumentWriter writer(fresh_folder("kernelindex_nameless"), "json");
  const Fixture f = make_fixture();
  Json run = f.run;
  run["metadata"].erase("name");
  EXPECT_THROW(write(writer, run, f.cited), std::invalid_argument);
}

TEST(Kernelindex, DocumentedExampleIsGenuine) {
  const Json example = first_json_block(std::filesystem::path(KS_SOURCE_DIR) / "docs" / "kernelindex.md");
  const std::vector<std::string> missing = missing_seed_paths(example);
  EXPECT_TRUE(missing.empty()) << "missing: " << ::testing::PrintToString(missing);
  EXPECT_TRUE(ks::digest_mismatches(example).empty()) << ::testing::PrintToString(ks::digest_mismatches(example));
}

}  // namespace

namespace {

// Records that reach every branch of a run document: timed and not, a message to escape (quotes,
// control characters, UTF-8, a byte that is not UTF-8), the GPU's state, a cold measurement's noise and
// sample clocks, the protocol's quantiles, a repetition, labels from a Python implementation.
std::vector<std::pair<ks::RunRecord, ks::RunContext>> run_variants() {
  const Fixture f = make_fixture();
  std::vector<std::pair<ks::RunRecord, ks::RunContext>> variants;
  variants.emplace_back(f.record, f.context);
  ks::RunRecord error = f.record;
  error.status = "error";
  error.message = "RuntimeError: \"x\" \\ tab\there\nnext line · µs \xff end";
  error.n_repeat = 0;
  error.device_peak_bytes = 0;
  error.started_at.clear();
  variants.emplace_back(error, f.context);
  ks::RunRecord gpu = f.record;
  gpu.gpu_start = {1980, 3201, 402.5, 39, ks::throttle::kGpuIdle};
  gpu.gpu_end = {1635, 3201, 699.75, 52, ks::throttle::kSwPowerCap};
  gpu.quantiles = {{0.5, 14654463.7}, {0.025, 14600001.25}, {0.999, 1.5e7}};
  gpu.noise = {0.00123, 1, 3};
  gpu.sample_sm_clock_min_mhz = 1757.0;
  gpu.sample_sm_clock_median_mhz = 1789.5;
  gpu.repetition = 3;
  ks::RunContext labelled = f.context;
  labelled.labels = {{"liger_version", "0.5.10"}, {"kernelsweep_version", "overridden"}};
  labelled.cpus_allowed = 4;
  variants.emplace_back(gpu, labelled);
  ks::RunRecord skipped = f.record;
  skipped.status = "skipped";
  skipped.message = "liger_kernel is not importable: No module named 'liger_kernel'";
  skipped.n_repeat = 0;
  skipped.gpu_uuid.clear();
  skipped.flops = std::nan("");
  variants.emplace_back(skipped, ks::RunContext{});
  return variants;
}

}  // namespace

// A run's document is written as text, without a JSON tree: the text is what dump() of the parsed
// document gives (keys in order, the same number forms, bytes that are not UTF-8 replaced).
TEST(Kernelindex, RunDocumentTextIsTheCompactDumpOfItsDocument) {
  const Fixture f = make_fixture();
  for (const auto& [record, context] : run_variants()) {
    const ks::RunDocumentText run = ks::benchmark_run_text(record, f.digests, context);
    const Json parsed = Json::parse(run.text);
    EXPECT_EQ(parsed.dump(-1, ' ', false, Json::error_handler_t::replace), run.text);
    EXPECT_EQ(parsed["metadata"]["name"], run.name);
  }
}
