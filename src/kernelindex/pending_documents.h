#pragma once
// The documents of the batch being stored, written ahead of its rows. Rank 0 stores a batch in three
// steps: these documents into the journal (one file in the documents folder), the rows into the
// results file (flushed), then the documents into their own files; the journal goes once they are
// written. A stop between the rows and the documents (a kill, a lost node) leaves the journal behind,
// and --resume writes from it the documents whose rows the results file holds, once each
// (run/outputs.cpp, RunOutputs::complete_pending_documents). docs/kernelindex.md describes the file.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ks {

class PendingDocuments {
 public:
  static constexpr const char* kFileName = ".kernelsweep-pending.jsonl";

  // What the journal holds: the results file's row count before the batch, and the batch's
  // kernelindex objects in row order, one compact line each (the text a jsonl shard takes).
  struct Batch {
    std::uint64_t rows_before = 0;
    std::vector<std::string> lines;
  };

  explicit PendingDocuments(const std::filesystem::path& folder) : path_(folder / kFileName) {}

  // Replaces the journal with this batch, written whole before returning. Throws std::system_error
  // carrying errno (ENOSPC for a full disk), after removing what it began to write.
  void hold(const Batch& batch);
  // The batch held, or nothing when there is no journal or it was cut short (the header's count is not
  // met: the stop came while it was written, before any of the batch's rows were stored).
  std::optional<Batch> read() const;
  // Removes the journal (the documents are written, or there is nothing to write).
  void clear();

 private:
  std::filesystem::path path_;
};

}  // namespace ks
