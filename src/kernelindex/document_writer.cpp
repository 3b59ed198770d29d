#include "kernelindex/document_writer.h"

#include <algorithm>
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

// A jsonl file's last line without its newline is what a stop left half-written: cut it off, so
// that appending goes on from a whole line.
void drop_torn_last_line(const std::filesystem::path& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (error || size == 0) return;
  std::ifstream in(path, std::ios::binary);
  std::uint64_t keep = size;
  std::string block;
  // Back from the end, a block at a time, to the last newline.
  while (keep > 0) {
    const std::uint64_t length = std::min<std::uint64_t>(keep, 1 << 16);
    block.resize(length);
    in.seekg(static_cast<std::streamoff>(keep - length));
    in.read(block.data(), static_cast<std::streamsize>(length));
    const auto newline = block.rfind('\n');
    if (newline != std::string::npos) {
      keep = keep - length + newline + 1;
      break;
    }
    keep -= length;
  }
  if (keep == size) return;
  std::filesystem::resize_file(path, keep, error);
  if (error) throw std::runtime_error(fmt::format("{}: cannot drop a line cut short: {}", path.string(), error.message()));
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
    drop_torn_last_line(path);
    jsonl_.open(path, std::ios::out | std::ios::app | std::ios::binary);  // append: --resume adds to it
    if (!jsonl_) throw std::runtime_error(fmt::format("{}: cannot open for appending: {}", path.string(), std::strerror(errno)));
  }
}

std::filesystem::path DocumentWriter::path_for(const Json& run) const {
  if (format_ == "jsonl") return directory_ / kJsonlFileName;
  return directory_ / (run_name(run) + ".json");
}

void DocumentWriter::write(const Json& run, const CitedView& cited, std::string_view line) {
  if (format_ == "jsonl") {
    run_name(run);  // the same precondition as the json format
    append_jsonl((line.empty() ? object_line(run, cited) : std::string(line)) + '\n');
  } else {
    write_json_file(run, cited);
  }
  ++written_;
}

void DocumentWriter::write_line(std::string_view line) {
  const Json object = Json::parse(line, nullptr, false);
  if (!object.is_object() || !object.contains("run"))
    throw std::invalid_argument(fmt::format("not a kernelindex object: {}", line.substr(0, 80)));
  if (format_ == "jsonl") {
    run_name(object["run"]);
    append_jsonl(std::string(line) + '\n');
  } else {
    write_json_object(path_for(object["run"]), object);
  }
  ++written_;
}

std::vector<bool> DocumentWriter::holds(const std::vector<Json>& runs) const {
  std::vector<bool> held;
  const std::set<std::string> recent = format_ == "jsonl" ? run_names_in_last_lines(runs.size()) : std::set<std::string>{};
  for (const Json& run : runs)
    held.push_back(format_ == "json" ? std::filesystem::exists(path_for(run)) : recent.count(run_name(run)) > 0);
  return held;
}

std::set<std::string> DocumentWriter::run_names_in_last_lines(std::size_t count) const {
  std::set<std::string> names;
  std::ifstream in(directory_ / kJsonlFileName, std::ios::binary);
  if (!in || count == 0) return names;
  // The file's end, read back a block at a time until it holds `count` whole lines.
  in.seekg(0, std::ios::end);
  std::int64_t start = in.tellg();
  std::string tail;
  while (start > 0 && static_cast<std::size_t>(std::count(tail.begin(), tail.end(), '\n')) <= count) {
    const std::int64_t length = std::min<std::int64_t>(start, 1 << 20);
    start -= length;
    std::string block(static_cast<std::size_t>(length), '\0');
    in.seekg(start);
    in.read(block.data(), length);
    tail.insert(0, block);
  }
  std::vector<std::string_view> lines;
  for (std::size_t begin = 0, end; begin < tail.size(); begin = end + 1) {
    end = tail.find('\n', begin);
    if (end == std::string::npos) break;  // the file ends in a line cut short, which is no document
    lines.push_back(std::string_view(tail).substr(begin, end - begin));
  }
  if (start > 0 && !lines.empty()) lines.erase(lines.begin());  // it may begin before what was read
  const std::size_t first = lines.size() > count ? lines.size() - count : 0;
  for (std::size_t i = first; i < lines.size(); ++i) {
    const Json object = Json::parse(lines[i], nullptr, false);
    if (!object.is_object() || !object.contains("run") || !object["run"].is_object()) continue;
    const Json metadata = object["run"].value("metadata", Json::object());
    if (metadata.contains("name") && metadata["name"].is_string()) names.insert(metadata["name"].get<std::string>());
  }
  return names;
}

void DocumentWriter::write_json_file(const Json& run, const CitedView& cited) {
  write_json_object(path_for(run), kernelindex_object(run, {cited.protocol.document, cited.environment.document,
                                                            cited.workload, cited.implementation.document}));
}

void DocumentWriter::write_json_object(const std::filesystem::path& path, const Json& object) {
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

std::string DocumentWriter::object_line(const Json& run, const CitedView& cited) {
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
  line += "}";
  return line;
}

void DocumentWriter::append_jsonl(const std::string& line) {
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
