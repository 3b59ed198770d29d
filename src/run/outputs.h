#pragma once
// Rank 0's end of the result stream: every record gets its digests, goes into the HDF5 file in
// batches (flushed at least every 2 seconds or 256 records, so a crash loses at most the points in
// flight), becomes a kernelindex document, and counts towards the progress line. A batch's
// documents are written once its rows are flushed: a document never describes a row the file does
// not hold, whatever stops the run (a kill, a full disk). They are written ahead to a journal
// (kernelindex/pending_documents.h) before the rows, so that a stop between the rows and the
// documents leaves no row without its document once --resume has run.
//
// All of that storing runs on a thread of its own (run/storing_thread.h), fed the records in chunks:
// the serving loop only counts each record and hands it on, so a batch being stored never holds up
// the answers to the ranks' requests nor the records coming in. The rows and the documents share that
// one thread rather than a thread each: a batch's journal, rows and documents are written in that
// order (each step's safety rests on the one before), so two threads would wait on each other at
// every batch, and the results file keeps one writer.
//
// The documents of a record are made on the rank that measured it (kernelindex/run_documents.h), the
// largest of rank 0's costs spread over the ranks: rank 0 finds the documents they cite among those it
// made (the protocols, environments and implementations, made once each) and writes the texts. A
// record made on rank 0 (its own points, points crashed or skipped), or whose citations rank 0 does
// not hold yet, gets its documents made here, the same way.
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/sweep_runner.h"
#include "config/sweep_spec.h"
#include "kernelindex/document_writer.h"
#include "kernelindex/kernelindex.h"
#include "kernelindex/pending_documents.h"
#include "kernelindex/run_documents.h"
#include "run/run_log.h"
#include "run/storing_thread.h"
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
  void on_record(RunRecord record, const nlohmann::json& protocol, const nlohmann::json& implementation,
                 std::optional<RecordDocuments> documents) override;
  std::optional<RunLabels> labels_of_rank_documents() const override { return run_labels_; }
  // False while the storing thread holds its bound of records waiting: the serving loop then leaves
  // the ranks' results with MPI, rather than waiting for room, and goes on answering requests.
  bool takes_records() const override { return !storing_.full(); }
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
  // (what a run that stops now, for want of space, loses): the rows once the storing thread is idle.
  std::uint64_t rows_in_file() {
    storing_.wait();
    return file_.run_count();
  }
  // Gives up the writer lock of a run that stops here without writing more (the job is ending).
  void release_lock() { lock_.release(); }
  std::size_t unstored() const { return received_ - stored_; }
  // Records received in this run (stored, or in the batch to be stored).
  std::size_t received() const { return received_; }
  // Points left with the `skipped` row of an earlier run (on_left_skipped).
  std::size_t left_skipped() const { return left_skipped_; }
  // The CPU time storing took so far (once finish or save_interrupted returned), by stage: making the documents (their
  // citations, the run document, the journal's lines) and writing them, and the results file's rows (appended and
  // flushed). What bench/rank0_ingest.cpp reports.
  struct StageTimes {
    double documents_s = 0;
    double rows_s = 0;
    std::size_t documents_made = 0;  // records whose documents were made here rather than on their rank
  };
  const StageTimes& stage_times() const { return stage_times_; }

 private:
  // The rank a record names; points no rank could run (skipped before dispatch) belong to rank 0.
  const RankIdentity& rank_of(int rank) const;
  // A record as the serving loop hands it to the storing thread, with the documents its rank made. The
  // protocol is held once for the records that cite it, which are most of them.
  struct Received {
    RunRecord record;
    std::shared_ptr<const nlohmann::json> protocol;
    nlohmann::json implementation;
    std::optional<RecordDocuments> documents;
  };
  // A run's kernelindex object, held until its row is in the file. The cited documents live in
  // run_documents_, which never drops one.
  struct PendingDocument {
    RecordDocuments documents;
    RunDocuments::Cited cited;
    std::string point_id;
  };
  void hand_over();
  std::shared_ptr<const nlohmann::json> held_protocol(const nlohmann::json& protocol);
  // On the storing thread: a record's citations and documents made and put in the batch (written
  // when full), and the batch written when it is kBatchInterval old.
  void store(Received& received);
  PendingDocument documents_of(Received& received, const RankIdentity& rank);
  void write_batch_if_due();
  void write_batch();
  void hold_pending_documents();
  bool file_holds_rows_of(const PendingDocuments::Batch& batch, const std::vector<Json>& objects) const;
  void reserve_documents_space(std::uint64_t bytes);

  ResultsFile file_;
  WriterLock lock_;
  DocumentWriter writer_;
  Progress progress_;
  // The run's --label pairs, as its results file keeps them: every run document carries them.
  RunLabels run_labels_;
  std::vector<RankIdentity> ranks_;
  RunHeadline headline_;
  RunDocuments run_documents_;
  std::set<std::string> protocols_in_file_;  // by digest
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
  StageTimes stage_times_;
  // The serving loop's side: records not yet handed to the storing thread, with their size, the
  // protocol the last one cited, and when the thread was last asked to write an old batch.
  std::vector<Received> received_chunk_;
  std::size_t received_chunk_bytes_ = 0;
  std::shared_ptr<const nlohmann::json> last_protocol_held_;
  std::chrono::steady_clock::time_point last_due_check_;
  std::atomic<std::size_t> stored_ = 0;  // records of this run whose rows are in the file
  StoringThread storing_;                // last: stopped before the members its tasks use go
};

}  // namespace ks
