#pragma once
// The kernelindex documents of a run's records, made wherever the record is made: on the rank that
// measured it, which sends the texts beside the record (rank 0 only finds what they cite and writes
// them), or on rank 0 for the records it makes itself (its own points, points crashed or skipped) and
// for those whose citations it does not hold. One maker for both places, so that a document is the
// same text wherever it was made.
//
// The documents a run cites by digest (its protocol, its rank's environment, its implementation) are
// made once each and kept: a run cites the same few again and again.
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "cluster/sweep_runner.h"
#include "config/sweep_spec.h"
#include "kernelindex/document_writer.h"
#include "kernelindex/kernelindex.h"
#include "store/run_labels.h"

namespace ks {

class RunDocuments {
 public:
  // `protocol`: the sweep's, which a record that was never timed cites; `labels`: the run's --label
  // pairs, which every run document carries.
  RunDocuments(const Registry& registry, const ProtocolSpec& protocol, RunLabels labels);

  // The documents a run cites beside its workload, kept here.
  struct Cited {
    const CitedDocument* protocol = nullptr;
    const CitedDocument* environment = nullptr;
    const CitedDocument* implementation = nullptr;
  };
  struct Made {
    RecordDocuments documents;
    Cited cited;
  };
  // The documents of `record`, measured by `rank` with `protocol` (null: never timed) and, for a Python
  // implementation, the worker's `implementation` provenance (null otherwise). Throws
  // std::invalid_argument naming the point for a record no document can describe (kernelindex.h), and
  // std::logic_error for a kernel or implementation the registry does not hold.
  Made make(const RunRecord& record, const RankIdentity& rank, const nlohmann::json& protocol,
            const nlohmann::json& implementation);
  // What documents made elsewhere cite, where this maker made those documents already (`rank`'s
  // environment included): none when one is unknown here, or its digest differs.
  std::optional<Cited> find(const Citations& cited, const RankIdentity& rank);

  // The environment document of `rank`, made once.
  const CitedDocument& environment_of(const RankIdentity& rank);

 private:
  const CitedDocument& protocol_for(const RunRecord& record, const nlohmann::json& protocol);
  const CitedDocument& implementation_for(const RunRecord& record, const RankIdentity& rank,
                                          const nlohmann::json& provenance);
  const std::string& hardware_slug_of(const RankIdentity& rank);
  RunContext context_for(const RankIdentity& rank, const nlohmann::json& implementation, std::string title,
                         std::string workload_slug);

  const Registry& registry_;
  ProtocolSpec protocol_spec_;
  RunLabels labels_;
  std::map<int, CitedDocument> environments_;       // by rank
  std::map<int, std::string> hardware_slugs_;       // by rank
  std::map<std::string, CitedDocument> protocols_;  // by canonical JSON of the resolved protocol
  // The protocol the last record cited, as it came: the next record almost always cites it again.
  nlohmann::json last_protocol_;
  const CitedDocument* last_protocol_cited_ = nullptr;
  std::map<std::string, CitedDocument> implementations_;  // by kernel/implementation/rank (and Python provenance)
  // The protocols and implementations made here, by digest: what documents made elsewhere are checked
  // against. The maps above never drop an entry, so the pointers stay valid.
  std::unordered_map<std::string, const CitedDocument*> by_digest_;
};

}  // namespace ks
