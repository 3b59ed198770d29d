#pragma once
// Writes kernelindex objects ({run, protocol, environment, workload, implementation}) into an
// output folder: format "json" gives one pretty file per run, named run.metadata.name + ".json"
// (written to a temporary name and renamed, so a reader never sees half a file); format "jsonl"
// gives one compact line per run in a bounded number of shards with an index (document_shards.h).
// Format "auto" is json for a sweep of at most kernelindex_json_max_points points, jsonl above.
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernelindex/document_shards.h"
#include "kernelindex/kernelindex.h"

namespace ks {

using Json = nlohmann::json;

// A document that runs cite by digest (a protocol, a rank's environment, an implementation), with
// what citing it takes, made once where the document is made rather than for every run that cites
// it: its digest and its text on one line (what a jsonl line carries; bytes that are not UTF-8
// replaced).
struct CitedDocument {
  Json document;
  std::string digest;  // document_digest(document)
  std::string text;
};
CitedDocument cite(Json document);

// What a run cites: the documents a rank cites in every run by reference, its workload document's
// compact text (json_text) as made with the run.
struct CitedView {
  const CitedDocument& protocol;
  const CitedDocument& environment;
  std::string_view workload;
  const CitedDocument& implementation;
};

// The format a run writes its documents in: `format` itself, or for "auto", json when the sweep
// measures at most `json_max_points` points and jsonl above (a file per run stays easy to browse for a
// small sweep; a million files in one folder is what parallel filesystems handle worst).
std::string resolve_documents_format(const std::string& format, std::uint64_t points, std::uint64_t json_max_points);

// Whether a file in a documents folder is one kernelsweep writes as a jsonl document store (a shard, the
// index): what --overwrite may remove.
bool is_document_store_file(const std::string& name);
// Removes a folder's jsonl document store (its shards and index), leaving every other file.
void remove_document_store(const std::filesystem::path& folder);

class DocumentWriter {
 public:
  // Creates `directory` if needed. Throws std::invalid_argument for a format other than "json" or
  // "jsonl", std::runtime_error (naming the path) when the folder or a jsonl file cannot be made.
  DocumentWriter(std::filesystem::path directory, std::string format, ShardOptions shards = {});

  // Writes the object {run, protocol, environment, workload, implementation} (kernelindex_object's
  // shape); a jsonl line takes the cited documents' texts as they are. Throws std::runtime_error naming the file when
  // the write fails, std::invalid_argument when the run has no metadata.name.
  void write(const Json& run, const CitedView& cited);
  // The same object given as its compact line (object_line's text, as the pending documents keep it),
  // with its run's point id and metadata.name: jsonl writes the line as it is, json prints it.
  // Throws std::invalid_argument when the name is empty.
  void write_line(std::string_view line, const std::string& point_id, const std::string& name);
  // The same, the point id and name read from the line. Throws std::invalid_argument when the line is
  // not a kernelindex object with a named run.
  void write_line(std::string_view line);

  // The object {run, ...} on one line, without the newline: a jsonl line's text. `run_text` is the run
  // document's compact text (benchmark_run_text).
  static std::string object_line(std::string_view run_text, const CitedView& cited);

  // For each run, whether its document is in the folder already: its file (json), or an entry among
  // the last runs.size() entries of the index (jsonl: where a resumed batch's documents would be; the
  // index's end is read once).
  std::vector<bool> holds(const std::vector<Json>& runs) const;

  // Writes the jsonl lines added since the last flush as one block of a shard, then their index
  // entries (json files are complete when write returns). The caller flushes at its own rhythm, beside
  // the HDF5 flushes.
  void flush();

  const std::filesystem::path& directory() const { return directory_; }
  const std::string& format() const { return format_; }
  std::size_t written() const { return written_; }

 private:
  std::filesystem::path json_path_for(const Json& run) const;
  void write_json_object(const std::filesystem::path& path, const Json& object);

  std::filesystem::path directory_;
  std::string format_;
  std::optional<DocumentShardWriter> shards_;
  std::size_t written_ = 0;
};

}  // namespace ks
