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
  std::string text = dump(document, -1);
  return {std::move(document), std::move(digest), std::move(text)};
}

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

std::filesystem::path DocumentWriter::path_for(const Json& run) const {
  if (format_ == "jsonl") return directory_ / kJsonlFileName;
  return directory_ / (run_name(run) + ".json");
}

void DocumentWriter::write(const Json& run, const CitedView& cited) {
  if (format_ == "jsonl") write_jsonl_line(run, cited);
  else write_json_file(run, cited);
  ++written_;
}

void DocumentWriter::write_json_file(const Json& run, const CitedView& cited) {
  const auto path = path_for(run);
  const Json object = kernelindex_object(
      run, {cited.protocol.document, cited.environment.document, cited.workload, cited.implementation.document});
  auto partial = path;
  partial += ".partial";
  {
    // Closed and checked here: a full disk often shows only when the buffer reaches the file, and
    // a document cut short must not be renamed into place.
    std::ofstream out(partial, std::ios::out | std::ios::trunc | std::ios::binary);
    out << dump(object, 2) << '\n';
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
  if (error) throw std::runtime_error(fmt::format("{}: cannot rename into {}: {}", partial.string(), path.string(), error.message()));
}

void DocumentWriter::write_jsonl_line(const Json& run, const CitedView& cited) {
  run_name(run);  // the same precondition as the json format
  // The text kernelindex_object(...).dump() gives (keys in sorted order), with the cited documents'
  // texts as made once by cite().
  std::string line = "{\"environment\":";
  line += cited.environment.text;
  line += ",\"implementation\":";
  line += cited.implementation.text;
  line += ",\"protocol\":";
  line += cited.protocol.text;
  line += ",\"run\":";
  line += dump(run, -1);
  line += ",\"workload\":";
  line += dump(cited.workload, -1);
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
