#include "kernelindex/document_writer.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

namespace ks {
namespace {

// Messages from kernels may hold bytes that are not UTF-8; a document must still be written.
std::string dump(const Json& value, int indent) { return value.dump(indent, ' ', false, Json::error_handler_t::replace); }

const std::string& run_name(const Json& object) {
  const auto run = object.find("run");
  if (run != object.end()) {
    const auto metadata = run->find("metadata");
    if (metadata != run->end()) {
      const auto name = metadata->find("name");
      if (name != metadata->end() && name->is_string() && !name->get_ref<const std::string&>().empty())
        return name->get_ref<const std::string&>();
    }
  }
  throw std::invalid_argument("kernelindex object has no run.metadata.name to name its file after");
}

// The documents that differ from one run to the next; the others (protocol, environment,
// implementation) are cited by nearly every run of a rank.
bool is_per_run(const std::string& key) { return key == "run" || key == "workload"; }

// Enough for the documents of one rank's run many times over; a run citing more is merely slower.
constexpr std::size_t kMaxCachedTexts = 64;

}  // namespace

DocumentWriter::DocumentWriter(std::filesystem::path directory, std::string format)
    : directory_(std::move(directory)), format_(std::move(format)) {
  if (format_ != "json" && format_ != "jsonl")
    throw std::invalid_argument(fmt::format("kernelindex format '{}': expected json or jsonl", format_));
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) throw std::runtime_error(fmt::format("{}: cannot create the kernelindex folder: {}", directory_.string(), error.message()));
  if (format_ == "jsonl") {
    const auto path = directory_ / kJsonlFileName;
    jsonl_.open(path, std::ios::out | std::ios::app | std::ios::binary);  // append: --resume adds to it
    if (!jsonl_) throw std::runtime_error(fmt::format("{}: cannot open for appending: {}", path.string(), std::strerror(errno)));
  }
}

std::filesystem::path DocumentWriter::path_for(const Json& object) const {
  if (format_ == "jsonl") return directory_ / kJsonlFileName;
  return directory_ / (run_name(object) + ".json");
}

void DocumentWriter::write(const Json& object) {
  if (format_ == "jsonl") write_jsonl_line(object);
  else write_json_file(object);
  ++written_;
}

void DocumentWriter::write_json_file(const Json& object) {
  const auto path = path_for(object);
  auto partial = path;
  partial += ".partial";
  {
    std::ofstream out(partial, std::ios::out | std::ios::trunc | std::ios::binary);
    out << dump(object, 2) << '\n';
    if (!out) throw std::runtime_error(fmt::format("{}: cannot write: {}", partial.string(), std::strerror(errno)));
  }
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error) throw std::runtime_error(fmt::format("{}: cannot rename into {}: {}", partial.string(), path.string(), error.message()));
}

const std::string& DocumentWriter::cited_text(const Json& document) {
  for (const auto& [cached, text] : cited_texts_)
    if (cached == document) return text;
  if (cited_texts_.size() >= kMaxCachedTexts) cited_texts_.clear();
  cited_texts_.emplace_back(document, dump(document, -1));
  return cited_texts_.back().second;
}

void DocumentWriter::write_jsonl_line(const Json& object) {
  run_name(object);  // the same precondition as the json format
  // The text object.dump() gives (keys in the object's sorted order), with the text of the cited
  // documents reused from earlier lines.
  std::string line = "{";
  for (const auto& [key, document] : object.items()) {
    if (line.size() > 1) line += ',';
    line += dump(Json(key), -1);
    line += ':';
    line += is_per_run(key) ? dump(document, -1) : cited_text(document);
  }
  line += "}\n";
  jsonl_.write(line.data(), static_cast<std::streamsize>(line.size()));
  if (!jsonl_)
    throw std::runtime_error(fmt::format("{}: cannot write: {}", (directory_ / kJsonlFileName).string(), std::strerror(errno)));
}

void DocumentWriter::flush() {
  if (!jsonl_.is_open()) return;
  jsonl_.flush();
  if (!jsonl_)
    throw std::runtime_error(fmt::format("{}: cannot flush: {}", (directory_ / kJsonlFileName).string(), std::strerror(errno)));
}

}  // namespace ks
