#include "run/outputs.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "common/canonical_json.h"
#include "common/clock.h"
#include "kernels/kernel.h"
#include "measure/do_bench.h"
#include "store/space_reserve.h"

namespace ks {
namespace {

constexpr std::size_t kBatchRecords = 64;
constexpr auto kBatchInterval = std::chrono::seconds(2);

// Free space the documents of a batch need, checked before its rows are stored: a pretty-printed
// document is about 5 KB, and a margin keeps room for the folder itself.
constexpr std::uint64_t kDocumentBytes = 8u << 10;
constexpr std::uint64_t kDocumentsMarginBytes = 4u << 20;

// The registry's entry for a record's implementation (every record names a registered one).
const ImplementationSpec& implementation_of(const Registry& registry, const RunRecord& r) {
  const KernelSpec* kernel = registry.find(r.kernel);
  const ImplementationSpec* implementation = kernel ? kernel->implementation(r.implementation) : nullptr;
  if (!implementation) throw std::logic_error("a record names " + r.kernel + "/" + r.implementation + ", which is not registered");
  return *implementation;
}

std::string title_of(const Registry& registry, const std::string& kernel_name) {
  const KernelSpec* kernel = registry.find(kernel_name);
  return kernel && !kernel->title.empty() ? kernel->title : kernel_name;
}

}  // namespace

RunOutputs::RunOutputs(const Registry& registry, ResultsFile file, WriterLock lock, DocumentWriter writer,
                       const ProtocolSpec& protocol, std::size_t points, double progress_interval_s)
    : registry_(registry), file_(std::move(file)), lock_(std::move(lock)), writer_(std::move(writer)), protocol_spec_(protocol),
      progress_(points, progress_interval_s), last_write_(std::chrono::steady_clock::now()) {}

void RunOutputs::on_start(const std::vector<RankIdentity>& ranks) {
  ranks_ = ranks;
  for (const RankIdentity& r : ranks) {
    file_.put_rank({r.rank, r.host.hostname, r.gpu.index, r.gpu.uuid, r.gpu.pci_bus_id, r.gpu.name});
    const CitedDocument& env = environment_of(r);
    file_.put_environment(env.digest, canonical_json(env.document));
    hardware_slugs_[r.rank] = hardware_slug(r.host, r.gpu);
  }
  file_.flush();
}

const RankIdentity& RunOutputs::rank_of(int rank) const {
  return ranks_.at(rank >= 0 && rank < static_cast<int>(ranks_.size()) ? rank : 0);
}

const CitedDocument& RunOutputs::environment_of(const RankIdentity& rank) {
  auto it = environments_.find(rank.rank);
  if (it == environments_.end())
    it = environments_.emplace(rank.rank, cite(environment_document(rank.host, rank.gpu, rank.python))).first;
  return it->second;
}

const CitedDocument& RunOutputs::protocol_for(const RunRecord& record, const nlohmann::json& protocol) {
  // A point that was never timed (crashed, timeout, skipped) cites the protocol it would have used.
  const Json resolved = protocol.is_null() ? protocol_to_json(resolve_protocol(protocol_spec_, implementation_of(registry_, record).backend))
                                           : protocol;
  const std::string key = canonical_json(resolved);
  auto it = protocols_.find(key);
  if (it == protocols_.end()) {
    it = protocols_.emplace(key, cite(protocol_document(resolved))).first;
    file_.put_protocol(it->second.digest, canonical_json(it->second.document));
  }
  return it->second;
}

// Where a record's implementation ran: its backend, or for an `any` one the device the worker used.
static std::string backend_of(const ImplementationSpec& implementation, const RunRecord& record) {
  if (implementation.backend != Backend::any) return to_string(implementation.backend);
  return record.gpu_uuid.empty() ? "cpu" : "cuda";
}

const CitedDocument& RunOutputs::implementation_for(const RunRecord& record, const RankIdentity& rank,
                                                    const nlohmann::json& provenance) {
  const ImplementationSpec& implementation = implementation_of(registry_, record);
  const std::string backend = backend_of(implementation, record);
  const std::string key = record.kernel + "/" + record.implementation + "/" + std::to_string(rank.rank) + "/" + backend +
                          "/" + canonical_json(provenance);
  auto it = implementations_.find(key);
  if (it == implementations_.end()) {
    Json document = implementation.python_module.empty()
                        ? implementation_document(record.kernel, record.implementation, backend,
                                                  implementation_libraries(backend, rank.gpu), implementation.origin)
                        : python_implementation_document(
                              record.kernel, record.implementation, backend,
                              provenance.is_null() ? Json{{"module", implementation.python_module}} : provenance,
                              implementation.origin);
    it = implementations_.emplace(key, cite(std::move(document))).first;
  }
  return it->second;
}

void RunOutputs::on_record(RunRecord record, const nlohmann::json& protocol, const nlohmann::json& implementation) {
  const RankIdentity& rank = rank_of(record.rank);
  const Json params = Json::parse(record.params_json);
  const std::string title = title_of(registry_, record.kernel);
  const CitedDocument& protocol_doc = protocol_for(record, protocol);
  const CitedDocument& environment_doc = environment_of(rank);
  const CitedDocument& implementation_doc = implementation_for(record, rank, implementation);
  std::string slug = workload_slug(params);
  const Json workload = workload_document(record.kernel, title, params, slug);
  Citations cited{protocol_doc.digest, environment_doc.digest, document_digest(workload), implementation_doc.digest};

  RunContext context{title, hardware_slugs_.at(rank.rank), std::move(slug)};
  // Labels a Python implementation asks for ("liger_version"), where the package's version is known.
  if (implementation.is_object()) {
    const Json labels = implementation.value("labels", Json::object());  // held: items() iterates it
    for (const auto& [label, version] : labels.items())
      if (version.is_string() && !version.get<std::string>().empty()) context.labels[label] = version;
  }
  documents_.push_back({benchmark_run_document(record, cited, context), &protocol_doc, &environment_doc, workload,
                        &implementation_doc});
  progress_.add(record);
  ++received_;
  if (record.status != "passed" && record.status != "skipped") ++not_passed_;
  batch_.emplace_back(std::move(record), std::move(cited));
  if (batch_.size() >= kBatchRecords) write_batch();
}

void RunOutputs::write_batch() {
  // The space for the batch's documents first: a full disk stops the run before the rows are stored,
  // rather than between the rows and their documents.
  if (!documents_.empty()) reserve_documents_space(kDocumentsMarginBytes + kDocumentBytes * documents_.size());
  if (!batch_.empty()) file_.append(batch_);
  file_.flush();
  batch_.clear();
  documents_space_.give_back();
  for (const PendingDocument& d : documents_) writer_.write(d.run, {*d.protocol, *d.environment, d.workload, *d.implementation});
  writer_.flush();
  documents_.clear();
  last_write_ = std::chrono::steady_clock::now();
}

void RunOutputs::reserve_documents_space(std::uint64_t bytes) {
  const auto placeholder = writer_.directory() / kDocumentsSpaceFile;
  try {
    if (!std::filesystem::exists(placeholder)) std::ofstream(placeholder, std::ios::app);
    documents_space_ = SpaceReserve(placeholder);
    documents_space_.ensure(bytes);
  } catch (const StorageFullError& e) {
    throw StorageFullError(fmt::format("documents folder {}: {}", writer_.directory().string(), e.what()));
  }
}

void RunOutputs::on_tick() {
  if (!batch_.empty() && std::chrono::steady_clock::now() - last_write_ >= kBatchInterval) write_batch();
  lock_.heartbeat();
  progress_.tick();
}

std::size_t RunOutputs::save_interrupted() {
  write_batch();
  lock_.release();  // the file is flushed, and this process writes nothing more
  return received_;
}

std::size_t RunOutputs::finish() {
  write_batch();
  const std::string path = file_.path().string();
  file_.finish(iso_utc_now());
  lock_.release();
  documents_space_ = SpaceReserve();
  std::filesystem::remove(writer_.directory() / kDocumentsSpaceFile);
  progress_.finish();
  std::fprintf(stderr, "\nresults:     %s\ndocuments:   %s (%zu, format %s)\n", path.c_str(),
               writer_.directory().c_str(), writer_.written(), writer_.format().c_str());
  return not_passed_;
}

}  // namespace ks
