#pragma once
// Rank 0's end of the result stream: every record gets its digests, goes into the HDF5 file in
// batches (flushed at least every 2 seconds or 256 records, so a crash loses at most the points in
// flight), becomes a kernelindex document, and counts towards the progress line. A batch's
// documents are written once its rows are flushed: a document never describes a row the file does
// not hold, whatever stops the run (a kill, a full disk). They are written ahead to a journal
// (kernelindex/pending_documents.h) before the rows, so that a stop between the rows and the
// documents leaves no row without its document once --resume has run.
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "cluster/sweep_runner.h"
#include "config/sweep_spec.h"
#include "kernelindex/document_writer.h"
#include "kernelindex/kernelindex.h"
#include "kernelindex/pending_documents.h"
#include "run/run_log.h"
#include "store/results_file.h"
#include "store/space_reserve.h"
#include "store/writer_lock.h"

namespace ks {

class RunOutputs final : public ResultSink {
 public:
  // The placeholder in the documents folder that holds their space (below), removed when the run ends.
  static constexpr const char* kDocumentsSpaceFile = ".kernelsweep-space";

  // `lock` is the results file's writer lock, held until the file is finished or saved.
  RunOutputs(const Registry& registry, ResultsFile file, WriterLock lock, DocumentWriter writer,
             const ProtocolSpec& protocol, std::size_t points, double progress_interval_s);

  // --resume, before measuring: writes the documents of the last batch a stop left in the journal,
  // those whose rows the file holds and that are not written yet. Returns how many it wrote.
  std::size_t complete_pending_documents();

  // What the log's start block says of the sweep (run/run_log.h); printed when the ranks are known.
  void set_headline(RunHeadline headline) { headline_ = std::move(headline); }
  void on_start(const std::vector<RankIdentity>& ranks) override;
  void on_record(RunRecord record, const nlohmann::json& protocol, const nlohmann::json& implementation) override;
  void on_tick() override;
  void on_left_skipped(std::size_t points) override;
  void on_note(const std::string& line) override { progress_.note(line); }
  // Writes what is left, closes the file, prints the summary; returns the number of points that did
  // not pass (skipped ones aside).
  std::size_t finish();
  // After an interruption: writes what was received and closes the file without an end time (as
  // `status` then shows), so that --resume completes it.
  void save_interrupted();
  // Rows in the file (this session's and earlier ones'), and records received but not yet stored
  // (what a run that stops now, for want of space, loses).
  std::uint64_t rows_in_file() const { return file_.run_count(); }
  // Gives up the writer lock of a run that stops here without writing more (the job is ending).
  void release_lock() { lock_.release(); }
  std::size_t unstored() const { return batch_.size(); }
  // Records received in this run (stored, or in the batch to be stored).
  std::size_t received() const { return received_; }
  // Points left with the `skipped` row of an earlier run (on_left_skipped).
  std::size_t left_skipped() const { return left_skipped_; }

 private:
  // The rank a record names; points no rank could run (skipped before dispatch) belong to rank 0.
  const RankIdentity& rank_of(int rank) const;
  const CitedDocument& environment_of(const RankIdentity& rank);
  const CitedDocument& protocol_for(const RunRecord& record, const nlohmann::json& protocol);
  const CitedDocument& implementation_for(const RunRecord& record, const RankIdentity& rank,
                                          const nlohmann::json& provenance);
  void write_batch();
  void hold_pending_documents();
  bool file_holds_rows_of(const PendingDocuments::Batch& batch, const std::vector<Json>& objects) const;
  void reserve_documents_space(std::uint64_t bytes);

  const Registry& registry_;
  ResultsFile file_;
  WriterLock lock_;
  DocumentWriter writer_;
  ProtocolSpec protocol_spec_;
  Progress progress_;
  // The run's --label pairs, as its results file keeps them: every run document carries them.
  RunLabels run_labels_;
  std::vector<RankIdentity> ranks_;
  RunHeadline headline_;
  std::map<int, std::string> hardware_slugs_;  // by rank
  std::map<int, CitedDocument> environments_;
  std::map<std::string, CitedDocument> protocols_;  // by canonical JSON of the resolved protocol
  // The protocol the last record cited, as it came: the next record almost always cites it again.
  nlohmann::json last_protocol_;
  const CitedDocument* last_protocol_cited_ = nullptr;
  std::map<std::string, CitedDocument> implementations_;  // by kernel/implementation/rank (and Python provenance)
  // A run's kernelindex object, held until its row is in the file. The cited documents live in the
  // maps above, which never drop an entry.
  struct PendingDocument {
    std::string run;  // the run document's compact text
    std::string point_id;
    std::string name;  // the run document's metadata.name
    const CitedDocument* protocol;
    const CitedDocument* environment;
    Json workload;
    const CitedDocument* implementation;
  };
  std::vector<StoredRun> batch_;
  std::vector<PendingDocument> documents_;   // those of batch_
  std::vector<std::string> document_lines_;  // their compact lines, as the journal holds them
  // Space held for the next batch's documents (a placeholder file in their folder, its blocks
  // reserved past its end): taken before the batch's rows are stored, given back just before the
  // documents are written, so that a disk filling meanwhile cannot leave rows without documents.
  SpaceReserve documents_space_;
  PendingDocuments pending_;
  std::chrono::steady_clock::time_point last_write_;
  std::size_t not_passed_ = 0;
  std::size_t received_ = 0;
  std::size_t left_skipped_ = 0;
};

}  // namespace ks
