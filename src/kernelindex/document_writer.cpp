#include "kernelindex/document_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "common/json_text.h"

namespace ks {
namespace {

const std::string& run_name(const Json& run) {
  const auto metadata = run.find("metadata");
  if (metadata != run.end()) {
    const auto name = metadata->find("name");
    if (name != metadata->end() && name->is_string() && !name->get_ref<const std::string&>().empty())
      return name->get_ref<const std::string&>();
  }
  throw std::invalid_argument("kernelindex run document has no metadata.name to name its file after");
}

}  // namespace

CitedDocument cite(Json document) {
  std::string digest = document_digest(document);
  std::string text = json_text(document);
  return {std::move(document), std::move(digest), std::move(text)};
}

std::string resolve_documents_format(const std::string& format, std::uint64_t points, std::uint64_t json_max_points) {
  if (format != "auto") return format;
  return points > json_max_points ? "jsonl" : "json";
}

bool is_document_store_file(const std::string& name) {
  return name == kDocumentIndexFileName || DocumentShardWriter::is_shard_name(name);
}

void remove_document_store(const std::filesystem::path& folder) {
  if (!std::filesystem::is_directory(folder)) return;
  std::vector<std::filesystem::path> ours;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.is_regular_file() && is_document_store_file(entry.path().filename().string()))
      ours.push_back(entry.path());
  for (const auto& file : ours) std::filesystem::remove(file);
}

DocumentWriter::DocumentWriter(std::filesystem::path directory, std::string format, ShardOptions shards)
    : directory_(std::move(directory)), format_(std::move(format)) {
  if (format_ != "json" && format_ != "jsonl")
    throw std::invalid_argument(fmt::format("kernelindex format '{}': expected json or jsonl", format_));
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error)
    throw std::runtime_error(
        fmt::format("{}: cannot create the kernelindex folder: {}", directory_.string(), error.message()));
  if (format_ == "jsonl")
    shards_.emplace(directory_, shards);  // goes on from what the folder holds: --resume adds to it
}

std::filesystem::path DocumentWriter::json_path_for(const Json& run) const {
  return directory_ / (run_name(run) + ".json");
}

void DocumentWriter::write(const Json& run, const CitedView& cited) {
  write_line(object_line(json_text(run), cited), run_point_id(run), run_name(run));
}

void DocumentWriter::write_line(std::string_view line, const std::string& point_id, const std::string& name) {
  if (name.empty()) throw std::invalid_argument("kernelindex run document has no metadata.name to name its file after");
  if (shards_) {
    shards_->add(line, point_id, name);
  } else {
    write_json_object(directory_ / (name + ".json"), Json::parse(line));
  }
  ++written_;
}

void DocumentWriter::write_line(std::string_view line) {
  const Json object = Json::parse(line, nullptr, false);
  if (!object.is_object() || !object.contains("run"))
    throw std::invalid_argument(fmt::format("not a kernelindex object: {}", line.substr(0, 80)));
  write_line(line, run_point_id(object["run"]), run_name(object["run"]));
}

std::vector<bool> DocumentWriter::holds(const std::vector<Json>& runs) const {
  std::vector<bool> held;
  const std::set<std::string> recent =
      shards_ ? shards_->run_names_in_last_entries(runs.size()) : std::set<std::string>{};
  for (const Json& run : runs)
    held.push_back(shards_ ? recent.count(run_name(run)) > 0 : std::filesystem::exists(json_path_for(run)));
  return held;
}

void DocumentWriter::write_json_object(const std::filesystem::path& path, const Json& object) {
  auto partial = path;
  partial += ".partial";
  {
    // Closed and checked here: a full disk often shows only when the buffer reaches the file, and
    // a document cut short must not be renamed into place.
    std::ofstream out(partial, std::ios::out | std::ios::trunc | std::ios::binary);
    // Messages from kernels may hold bytes that are not UTF-8; a document must still be written (as
    // json_text, compact, writes them).
    out << object.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
    out.close();
    if (!out) {
      const int cause = errno;
      std::error_code ignored;
      std::filesystem::remove(partial, ignored);
      throw std::runtime_error(fmt::format("{}: cannot write: {}", path.string(), std::strerror(cause)));
    }
  }
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error)
    throw std::runtime_error(
        fmt::format("{}: cannot rename into {}: {}", partial.string(), path.string(), error.message()));
}

std::string DocumentWriter::object_line(std::string_view run_text, const CitedView& cited) {
  // The text kernelindex_object(...).dump() gives (keys in sorted order), with the cited documents'
  // texts as made once by cite().
  std::string line = "{\"environment\":";
  line += cited.environment.text;
  line += ",\"implementation\":";
  line += cited.implementation.text;
  line += ",\"protocol\":";
  line += cited.protocol.text;
  line += ",\"run\":";
  line += run_text;
  line += ",\"workload\":";
  line += cited.workload;
  line += "}";
  return line;
}

void DocumentWriter::flush() {
  if (shards_) shards_->flush();
}

}  // namespace ks
