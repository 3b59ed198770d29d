#include "kernelindex/run_documents.h"

#include <stdexcept>
#include <utility>

#include "common/canonical_json.h"
#include "common/json_text.h"
#include "measure/protocol.h"

namespace ks {
namespace {

// The registry's entry for a record's implementation (every record names a registered one).
const ImplementationSpec& implementation_of(const Registry& registry, const RunRecord& r) {
  const KernelSpec* kernel = registry.find(r.kernel);
  const ImplementationSpec* implementation = kernel ? kernel->implementation(r.implementation) : nullptr;
  if (!implementation)
    throw std::logic_error("a record names " + r.kernel + "/" + r.implementation + ", which is not registered");
  return *implementation;
}

// Where a record's implementation ran: its backend, or for an `any` one the device the worker used.
std::string backend_of(const ImplementationSpec& implementation, const RunRecord& record) {
  if (implementation.backend != Backend::any) return to_string(implementation.backend);
  return record.gpu_uuid.empty() ? "cpu" : "cuda";
}

}  // namespace

RunDocuments::RunDocuments(const Registry& registry, const ProtocolSpec& protocol, RunLabels labels)
    : registry_(registry), protocol_spec_(protocol), labels_(std::move(labels)) {}

const CitedDocument& RunDocuments::environment_of(const RankIdentity& rank) {
  auto it = environments_.find(rank.rank);
  if (it == environments_.end())
    it = environments_
             .emplace(rank.rank, cite(environment_document(rank.host, rank.gpu, rank.python,
                                                           rank.calibration ? to_json(*rank.calibration) : Json())))
             .first;
  return it->second;
}

const std::string& RunDocuments::hardware_slug_of(const RankIdentity& rank) {
  auto it = hardware_slugs_.find(rank.rank);
  if (it == hardware_slugs_.end()) it = hardware_slugs_.emplace(rank.rank, hardware_slug(rank.host, rank.gpu)).first;
  return it->second;
}

const CitedDocument& RunDocuments::protocol_for(const RunRecord& record, const nlohmann::json& protocol) {
  if (last_protocol_cited_ && !protocol.is_null() && protocol == last_protocol_) return *last_protocol_cited_;
  // A point that was never timed (crashed, timeout, skipped) cites the protocol it would have used.
  const Json resolved =
      protocol.is_null()
          ? protocol_to_json(resolve_protocol(protocol_spec_, implementation_of(registry_, record).backend))
          : protocol;
  const std::string key = canonical_json(resolved);
  auto it = protocols_.find(key);
  if (it == protocols_.end()) {
    it = protocols_.emplace(key, cite(protocol_document(resolved))).first;
    by_digest_.emplace(it->second.digest, &it->second);
  }
  if (!protocol.is_null()) {
    last_protocol_ = protocol;
    last_protocol_cited_ = &it->second;
  }
  return it->second;
}

const CitedDocument& RunDocuments::implementation_for(const RunRecord& record, const RankIdentity& rank,
                                                      const nlohmann::json& provenance) {
  const ImplementationSpec& implementation = implementation_of(registry_, record);
  const std::string backend = backend_of(implementation, record);
  const std::string key = record.kernel + "/" + record.implementation + "/" + std::to_string(rank.rank) + "/" +
                          backend + "/" + canonical_json(provenance);
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
    by_digest_.emplace(it->second.digest, &it->second);
  }
  return it->second;
}

RunContext RunDocuments::context_for(const RankIdentity& rank, const nlohmann::json& implementation, std::string title,
                                     std::string workload_slug) {
  RunContext context{std::move(title), hardware_slug_of(rank), std::move(workload_slug)};
  context.cpus_allowed = rank.host.cpus_allowed;
  for (const auto& [label, value] : labels_) context.labels[label] = value;
  // Labels a Python implementation asks for ("liger_version"), where the package's version is known.
  if (implementation.is_object()) {
    const Json labels = implementation.value("labels", Json::object());  // held: items() iterates it
    for (const auto& [label, version] : labels.items())
      if (version.is_string() && !version.get<std::string>().empty()) context.labels[label] = version;
  }
  return context;
}

RunDocuments::Made RunDocuments::make(const RunRecord& record, const RankIdentity& rank, const nlohmann::json& protocol,
                                      const nlohmann::json& implementation) {
  const Json params = Json::parse(record.params_json);
  const KernelSpec* kernel = registry_.find(record.kernel);
  std::string title = kernel && !kernel->title.empty() ? kernel->title : record.kernel;
  Made made;
  made.cited = {&protocol_for(record, protocol), &environment_of(rank),
                &implementation_for(record, rank, implementation)};
  std::string slug = workload_slug(params);
  const Json workload = workload_document(record.kernel, title, params, slug);
  Citations& cited = made.documents.cited;
  cited = {made.cited.protocol->digest, made.cited.environment->digest, document_digest(workload),
           made.cited.implementation->digest};
  made.documents.workload = json_text(workload);
  made.documents.run =
      benchmark_run_text(record, cited, context_for(rank, implementation, std::move(title), std::move(slug)));
  return made;
}

std::optional<RunDocuments::Cited> RunDocuments::find(const Citations& cited, const RankIdentity& rank) {
  const CitedDocument& environment = environment_of(rank);
  const auto protocol = by_digest_.find(cited.protocol_digest);
  const auto implementation = by_digest_.find(cited.implementation_digest);
  if (environment.digest != cited.environment_digest || protocol == by_digest_.end() ||
      implementation == by_digest_.end())
    return std::nullopt;
  return Cited{protocol->second, &environment, implementation->second};
}

}  // namespace ks
