#include "run/outputs.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "common/canonical_json.h"
#include "common/clock.h"
#include "common/huge_pages.h"
#include "common/thread_cpu.h"
#include "store/space_reserve.h"

namespace ks {
namespace {

// Records per batch: each batch costs a flush of the results file (its chunks rewritten with their
// checksums), a journal write and an allocation of the documents' space, so fewer, larger batches
// store faster; 256 is at most a few tens of milliseconds of results at the fastest rates, and the
// interval below bounds what a slow sweep holds.
constexpr std::size_t kBatchRecords = 256;
constexpr auto kBatchInterval = std::chrono::seconds(2);
// Records handed to the storing thread at once (fewer wake-ups of it), and how often the serving loop
// asks it to write a batch that has grown old.
constexpr std::size_t kChunkRecords = 64;
constexpr auto kDueCheckInterval = std::chrono::milliseconds(100);

// Free space the documents of a batch need, checked before its rows are stored: a pretty-printed
// document is about 5 KB, and a margin keeps room for the folder itself (a directory block per
// hundred or so files). The space is allocated and given back at every batch, ten or more a second
// in a fast sweep: the margin is what that costs most of.
constexpr std::uint64_t kDocumentBytes = 8u << 10;
constexpr std::uint64_t kDocumentsMarginBytes = 1u << 20;

}  // namespace

RunOutputs::RunOutputs(const Registry& registry, ResultsFile file, WriterLock lock, DocumentWriter writer,
                       const ProtocolSpec& protocol, std::size_t points, double progress_interval_s)
    : file_(std::move(file)),
      lock_(std::move(lock)),
      writer_(std::move(writer)),
      progress_(points, progress_interval_s),
      run_labels_(file_.read_info().labels),
      run_documents_(registry, protocol, run_labels_),
      pending_(writer_.directory()),
      last_write_(std::chrono::steady_clock::now()) {
  // Rank 0 takes in records at thousands a second, each with its raw samples (80 KB for 10,000), holds
  // a batch of them, and frees them once stored: memory given back to the kernel at every batch came
  // back in fresh pages, whose faults took a sixth of rank 0's time with such records
  // (bench/results/rank0_ingest-cpu2.md).
  grow_the_heap_in_large_steps();
}

void RunOutputs::on_start(const std::vector<RankIdentity>& ranks) {
  ranks_ = ranks;
  progress_.note(start_block(headline_, ranks, scheduler_line(scheduler_environment())));
  for (const RankIdentity& r : ranks) {
    file_.put_rank({r.rank, r.host.hostname, r.gpu.index, r.gpu.uuid, r.gpu.pci_bus_id, r.gpu.name,
                    r.calibration ? to_json(*r.calibration).dump() : std::string()});
    const CitedDocument& env = run_documents_.environment_of(r);
    file_.put_environment(env.digest, canonical_json(env.document));
  }
  file_.flush();
}

const RankIdentity& RunOutputs::rank_of(int rank) const {
  return ranks_.at(rank >= 0 && rank < static_cast<int>(ranks_.size()) ? rank : 0);
}

void RunOutputs::on_record(RunRecord record, const nlohmann::json& protocol, const nlohmann::json& implementation,
                           std::optional<RecordDocuments> documents) {
  progress_.add(record);
  ++received_;
  if (did_not_pass(record.status)) {
    progress_.note(not_passed_line(record));
    ++not_passed_;
  }
  received_chunk_bytes_ += sizeof(Received) + record.message.size() + record.params_json.size() +
                           sizeof(double) * (record.samples_ns.size() + record.sample_sm_clock_mhz.size()) +
                           (documents ? documents->run.text.size() + documents->workload.size() : 0);
  received_chunk_.push_back({std::move(record), held_protocol(protocol), implementation, std::move(documents)});
  if (received_chunk_.size() >= kChunkRecords) hand_over();
  storing_.check();
}

// The link's protocol lives until its next receive: the storing thread gets a copy, made once for a
// run of records that cite the same protocol.
std::shared_ptr<const nlohmann::json> RunOutputs::held_protocol(const nlohmann::json& protocol) {
  if (!last_protocol_held_ || *last_protocol_held_ != protocol)
    last_protocol_held_ = std::make_shared<const nlohmann::json>(protocol);
  return last_protocol_held_;
}

void RunOutputs::hand_over() {
  if (received_chunk_.empty()) return;
  auto chunk = std::make_shared<std::vector<Received>>(std::move(received_chunk_));
  storing_.give(
      [this, chunk] {
        for (Received& received : *chunk) store(received);
      },
      received_chunk_bytes_);
  received_chunk_.clear();
  received_chunk_bytes_ = 0;
}

void RunOutputs::store(Received& received) {
  std::optional<ThreadCpuSpan> documents_time(stage_times_.documents_s);
  PendingDocument& pending = documents_.emplace_back(documents_of(received, rank_of(received.record.rank)));
  documents_time.reset();
  batch_.emplace_back(std::move(received.record), pending.documents.cited);
  if (batch_.size() >= kBatchRecords) write_batch();
}

// The documents the record's rank made, where rank 0 holds the documents they cite; else made here
// (the same texts: one maker), the protocol of a record going into the file when first cited.
RunOutputs::PendingDocument RunOutputs::documents_of(Received& received, const RankIdentity& rank) {
  const RunRecord& record = received.record;
  std::string point_id = record.point_id.empty() ? "-" : record.point_id;
  if (received.documents)
    if (const auto cited = run_documents_.find(received.documents->cited, rank))
      return {std::move(*received.documents), *cited, std::move(point_id)};
  RunDocuments::Made made = run_documents_.make(record, rank, *received.protocol, received.implementation);
  ++stage_times_.documents_made;
  const CitedDocument& protocol = *made.cited.protocol;
  if (protocols_in_file_.insert(protocol.digest).second)
    file_.put_protocol(protocol.digest, canonical_json(protocol.document));
  return {std::move(made.documents), made.cited, std::move(point_id)};
}

void RunOutputs::write_batch() {
  // The batch's documents first go to the journal, with the space for the documents themselves held
  // while the rows are stored: a full disk stops the run before the rows are stored rather than
  // between the rows and their documents, and a kill between the two leaves the journal, from which
  // --resume writes them.
  if (!documents_.empty()) {
    ThreadCpuSpan documents_time(stage_times_.documents_s);
    hold_pending_documents();
  }
  try {
    ThreadCpuSpan rows_time(stage_times_.rows_s);
    if (!batch_.empty()) file_.append(batch_);
    file_.flush();
  } catch (const StorageFullError&) {
    pending_.clear();  // refused before HDF5 wrote any of the rows: the journal describes nothing
    throw;
  }
  stored_ += batch_.size();
  batch_.clear();
  ThreadCpuSpan documents_time(stage_times_.documents_s);
  documents_space_.give_back();
  for (std::size_t i = 0; i < documents_.size(); ++i) {
    const PendingDocument& d = documents_[i];
    writer_.write_line(document_lines_[i], d.point_id, d.documents.run.name);
  }
  writer_.flush();
  if (!documents_.empty()) pending_.clear();
  documents_.clear();
  document_lines_.clear();
  last_write_ = std::chrono::steady_clock::now();
}

void RunOutputs::hold_pending_documents() {
  PendingDocuments::Batch pending{file_.run_count(), {}};
  std::uint64_t bytes = 0;
  for (const PendingDocument& d : documents_) {
    pending.lines.push_back(DocumentWriter::object_line(
        d.documents.run.text,
        {*d.cited.protocol, *d.cited.environment, d.documents.workload, *d.cited.implementation}));
    bytes += pending.lines.back().size() + 1;
  }
  // A pretty-printed document (format json) takes more room than its compact line.
  const std::uint64_t documents_bytes = std::max<std::uint64_t>(2 * bytes, kDocumentBytes * documents_.size());
  reserve_documents_space(kDocumentsMarginBytes + bytes + documents_bytes);
  documents_space_.give_back();
  try {
    pending_.hold(pending);
  } catch (const std::system_error& e) {
    if (e.code() == std::errc::no_space_on_device || e.code().value() == EDQUOT)
      throw StorageFullError(fmt::format("documents folder {}: {}", writer_.directory().string(), e.what()));
    throw;
  }
  document_lines_ = std::move(pending.lines);  // a jsonl shard takes the same lines
  try {
    reserve_documents_space(kDocumentsMarginBytes + documents_bytes);
  } catch (const StorageFullError&) {
    pending_.clear();  // the rows will not be stored: the journal describes nothing
    throw;
  }
}

// The journal's documents describe the rows stored right after it was written: the file holds them
// when it has its rows_before + count rows and those rows are the documents' points, in order.
bool RunOutputs::file_holds_rows_of(const PendingDocuments::Batch& batch, const std::vector<Json>& objects) const {
  if (file_.run_count() < batch.rows_before + objects.size()) return false;
  const std::vector<StoredRun> rows = file_.read_runs(batch.rows_before, objects.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const bool has_run = objects[i].is_object() && objects[i].contains("run");
    if (!has_run || run_point_id(objects[i]["run"]) != rows[i].point_id) return false;
  }
  return true;
}

std::size_t RunOutputs::complete_pending_documents() {
  const auto batch = pending_.read();
  std::size_t written = 0;
  std::vector<Json> objects, runs;
  if (batch)
    for (const std::string& line : batch->lines) objects.push_back(Json::parse(line, nullptr, false));
  if (batch && file_holds_rows_of(*batch, objects)) {
    for (const Json& object : objects) runs.push_back(object["run"]);
    const std::vector<bool> held = writer_.holds(runs);
    for (std::size_t i = 0; i < objects.size(); ++i) {
      if (held[i]) continue;  // written before the stop
      writer_.write_line(batch->lines[i]);
      ++written;
    }
    writer_.flush();
  }
  pending_.clear();  // what it held is written, or its rows were never stored (their points run again)
  return written;
}

void RunOutputs::reserve_documents_space(std::uint64_t bytes) {
  try {
    if (!documents_space_.holds_a_file()) {  // the placeholder is made once, and kept open
      const auto placeholder = writer_.directory() / kDocumentsSpaceFile;
      if (!std::filesystem::exists(placeholder)) std::ofstream(placeholder, std::ios::app);
      documents_space_ = SpaceReserve(placeholder);
    }
    documents_space_.ensure(bytes);
  } catch (const StorageFullError& e) {
    throw StorageFullError(fmt::format("documents folder {}: {}", writer_.directory().string(), e.what()));
  }
}

void RunOutputs::on_tick() {
  // A storing thread that is behind gets nothing more until it has room, so that the serving loop
  // never waits for it: the chunk in hand waits here, and no old batch needs a look while the thread
  // is busy storing the ones before it.
  const auto now = std::chrono::steady_clock::now();
  if (!storing_.full()) {
    hand_over();
    if (now - last_due_check_ >= kDueCheckInterval) {
      last_due_check_ = now;
      storing_.give([this] { write_batch_if_due(); });
    }
  }
  storing_.check();
  lock_.heartbeat();
  progress_.tick();
}

void RunOutputs::write_batch_if_due() {
  if (!batch_.empty() && std::chrono::steady_clock::now() - last_write_ >= kBatchInterval) write_batch();
}

void RunOutputs::on_left_skipped(std::size_t points) {
  progress_.forget(points);
  left_skipped_ += points;
  std::fprintf(stderr,
               "resuming: %zu points recorded skipped before are still skipped (no rank of this run has a GPU): "
               "no new row; --retry-skipped records them again\n",
               points);
}

void RunOutputs::save_interrupted() {
  hand_over();
  storing_.give([this] { write_batch(); });
  storing_.drain();
  lock_.release();  // the file is flushed, and this process writes nothing more
}

std::size_t RunOutputs::finish() {
  hand_over();
  storing_.give([this] { write_batch(); });
  storing_.drain();
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
