#pragma once
// Writes kernelindex objects ({run, protocol, environment, workload, implementation}) into an
// output folder: format "json" gives one pretty file per run, named run.metadata.name + ".json"
// (written to a temporary name and renamed, so a reader never sees half a file); format "jsonl"
// gives one compact line per run appended to kernelindex.jsonl in the folder (a line that a stop cut
// short is dropped when the file is opened again: it never was a document).
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

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

// What a run cites: the documents a rank cites in every run by reference, its workload as made.
struct CitedView {
  const CitedDocument& protocol;
  const CitedDocument& environment;
  const Json& workload;
  const CitedDocument& implementation;
};

class DocumentWriter {
 public:
  static constexpr const char* kJsonlFileName = "kernelindex.jsonl";

  // Creates `directory` if needed. Throws std::invalid_argument for a format other than "json" or
  // "jsonl", std::runtime_error (naming the path) when the folder or the jsonl file cannot be made.
  DocumentWriter(std::filesystem::path directory, std::string format);

  // Writes the object {run, protocol, environment, workload, implementation} (kernelindex_object's
  // shape); a jsonl line takes the cited documents' texts as they are. Throws std::runtime_error naming the file when the
  // write fails, std::invalid_argument when the run has no metadata.name.
  // `line`, when given, is object_line(run, cited), made already by the caller: jsonl writes it as is.
  void write(const Json& run, const CitedView& cited, std::string_view line = {});
  // The same object given as its compact line (object_line's text, as the pending documents keep it).
  // Throws std::invalid_argument when the line is not a kernelindex object with a named run.
  void write_line(std::string_view line);

  // The object {run, ...} on one line, without the newline: a jsonl line's text.
  static std::string object_line(const Json& run, const CitedView& cited);

  // For each run, whether its document is in the folder already: its file (json), or a line among
  // the last runs.size() lines of kernelindex.jsonl (jsonl: where a resumed batch's documents would
  // be; the file's end is read once).
  std::vector<bool> holds(const std::vector<Json>& runs) const;

  // Pushes buffered jsonl lines to the file (json files are complete when write returns). The caller
  // flushes at its own rhythm, beside the HDF5 flushes; the destructor flushes too.
  void flush();

  // The file a run's object goes to: directory/NAME.json, or directory/kernelindex.jsonl.
  std::filesystem::path path_for(const Json& run) const;

  const std::filesystem::path& directory() const { return directory_; }
  const std::string& format() const { return format_; }
  std::size_t written() const { return written_; }

 private:
  void write_json_file(const Json& run, const CitedView& cited);
  void append_jsonl(const std::string& line);
  void write_json_object(const std::filesystem::path& path, const Json& object);
  std::set<std::string> run_names_in_last_lines(std::size_t count) const;

  std::filesystem::path directory_;
  std::string format_;
  std::ofstream jsonl_;
  std::size_t written_ = 0;
};

}  // namespace ks
