#pragma once
// Rank 0's end of the result stream: every record gets its digests, goes into the HDF5 file in
// batches (flushed at least every 2 seconds or 64 records, so a crash loses at most the points in
// flight), becomes a kernelindex document, and counts towards the progress line.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/sweep_runner.h"
#include "config/sweep_spec.h"
#include "kernelindex/document_writer.h"
#include "kernelindex/kernelindex.h"
#include "run/progress.h"
#include "store/results_file.h"

namespace ks {

class RunOutputs final : public ResultSink {
 public:
  RunOutputs(const Registry& registry, ResultsFile file, DocumentWriter writer, const ProtocolSpec& protocol, std::size_t points,
             double progress_interval_s);

  void on_start(const std::vector<RankIdentity>& ranks) override;
  void on_record(RunRecord record, const nlohmann::json& protocol) override;
  void on_tick() override;
  // Writes what is left, closes the file, prints the summary; returns the number of points that did
  // not pass (skipped ones aside).
  std::size_t finish();
  // After an interruption: writes what was received and closes the file without an end time (as
  // `status` then shows), so that --resume completes it. Returns the number of points stored.
  std::size_t save_interrupted();

 private:
  // The rank a record names; points no rank could run (skipped before dispatch) belong to rank 0.
  const RankIdentity& rank_of(int rank) const;
  const CitedDocument& environment_of(const RankIdentity& rank);
  const CitedDocument& protocol_for(const RunRecord& record, const nlohmann::json& protocol);
  const CitedDocument& implementation_for(const RunRecord& record, const RankIdentity& rank);
  void write_batch();

  const Registry& registry_;
  ResultsFile file_;
  DocumentWriter writer_;
  ProtocolSpec protocol_spec_;
  Progress progress_;
  std::vector<RankIdentity> ranks_;
  std::map<int, std::string> hardware_slugs_;  // by rank
  std::map<int, CitedDocument> environments_;
  std::map<std::string, CitedDocument> protocols_;        // by canonical JSON of the resolved protocol
  std::map<std::string, CitedDocument> implementations_;  // by kernel/implementation/rank
  std::vector<StoredRun> batch_;
  std::chrono::steady_clock::time_point last_write_;
  std::size_t not_passed_ = 0;
  std::size_t received_ = 0;
};

}  // namespace ks
