#pragma once
// Writes kernelindex objects ({run, protocol, environment, workload, implementation}) into an
// output folder: format "json" gives one pretty file per run, named run.metadata.name + ".json"
// (written to a temporary name and renamed, so a reader never sees half a file); format "jsonl"
// gives one compact line per run appended to kernelindex.jsonl in the folder.
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernelindex/kernelindex.h"

namespace ks {

using Json = nlohmann::json;

class DocumentWriter {
 public:
  static constexpr const char* kJsonlFileName = "kernelindex.jsonl";

  // Creates `directory` if needed. Throws std::invalid_argument for a format other than "json" or
  // "jsonl", std::runtime_error (naming the path) when the folder or the jsonl file cannot be made.
  DocumentWriter(std::filesystem::path directory, std::string format);

  // Writes the object {run, protocol, environment, workload, implementation} (kernelindex_object's
  // shape) without copying the cited documents. Throws std::runtime_error naming the file when the
  // write fails, std::invalid_argument when the run has no metadata.name.
  void write(const Json& run, const CitedView& cited);

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
  void write_jsonl_line(const Json& run, const CitedView& cited);
  // The compact text of a document a run cites. A rank cites the same protocol, environment and
  // implementation in nearly every run, so their text is kept, keyed by the document object and the
  // digest the run cites it by, instead of being serialised again for each line.
  const std::string& cited_text(const Json& run, const char* digest_key, const Json& document);
  struct CitedText {
    const Json* document;
    std::string digest;
    std::string text;
  };

  std::filesystem::path directory_;
  std::string format_;
  std::ofstream jsonl_;
  std::vector<CitedText> cited_texts_;
  std::size_t written_ = 0;
};

}  // namespace ks
