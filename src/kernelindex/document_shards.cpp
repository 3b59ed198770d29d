#include "kernelindex/document_shards.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

namespace ks {
namespace {

constexpr std::string_view kShardPrefix = "kernelindex-";
constexpr std::string_view kShardExtension = ".jsonl";
constexpr const char* kIndexHeader =
    "# kernelsweep document index: point_id, run, shard file, block offset, block bytes, line offset, line bytes\n";

// The number in a shard's name, or nothing for another file.
std::optional<std::size_t> shard_number(const std::string& name) {
  if (!name.starts_with(kShardPrefix)) return std::nullopt;
  const std::size_t digits_end = name.find('.', kShardPrefix.size());
  if (digits_end == std::string::npos) return std::nullopt;
  // .jsonl and the ending of the compression the name says.
  if (name.substr(digits_end) != fmt::format("{}{}", kShardExtension, compression_suffix(compression_of_file(name))))
    return std::nullopt;
  std::size_t number = 0;
  const char* first = name.data() + kShardPrefix.size();
  const char* last = name.data() + digits_end;
  const auto [end, error] = std::from_chars(first, last, number);
  if (error != std::errc() || end != last || first == last) return std::nullopt;
  return number;
}

}  // namespace

std::string DocumentShardWriter::shard_name(std::size_t number, Compression compression) {
  return fmt::format("{}{:04}{}{}", kShardPrefix, number, kShardExtension, compression_suffix(compression));
}

bool DocumentShardWriter::is_shard_name(const std::string& name) { return shard_number(name).has_value(); }

DocumentShardWriter::DocumentShardWriter(std::filesystem::path folder, ShardOptions options)
    : folder_(std::move(folder)), options_(options) {
  const auto index_path = folder_ / kDocumentIndexFileName;
  const bool fresh = !std::filesystem::exists(index_path);
  if (!fresh) drop_line_cut_short(index_path);
  go_on_from_index();
  index_.open(index_path, std::ios::out | std::ios::app | std::ios::binary);
  if (!index_)
    throw std::runtime_error(
        fmt::format("{}: cannot open for appending: {}", index_path.string(), std::strerror(errno)));
  index_size_ = std::filesystem::file_size(index_path);
  if (fresh) {
    append(index_, index_path, kIndexHeader, 0);
    index_size_ = std::string_view(kIndexHeader).size();
  }
}

void DocumentShardWriter::go_on_from_index() {
  const auto index_path = folder_ / kDocumentIndexFileName;
  const std::vector<std::string> last = last_lines(index_path, 1);
  const std::optional<IndexEntry> entry = last.empty() ? std::nullopt : parse_index_line(last.front());
  const bool comment = !last.empty() && (last.front().empty() || last.front().front() == '#');
  // What follows cuts shards to what the index names: an index it cannot read must stop it.
  if (!last.empty() && !comment && !(entry && shard_number(entry->file)))
    throw std::runtime_error(
        fmt::format("{}: its last line is not an index entry: {}", index_path.string(), last.front().substr(0, 80)));
  constexpr std::size_t kNoShard = std::numeric_limits<std::size_t>::max();
  const std::size_t named = entry ? shard_number(entry->file).value_or(kNoShard) : kNoShard;
  // Shards past the one the index ends in hold no document the index names.
  for (const auto& file : std::filesystem::directory_iterator(folder_)) {
    const auto number = shard_number(file.path().filename().string());
    if (number && (named == kNoShard || *number > named)) std::filesystem::remove(file.path());
  }
  if (named == kNoShard) return;  // no shard yet: the first block opens kernelindex-0000
  const auto path = folder_ / entry->file;
  if (!std::filesystem::is_regular_file(path))
    throw std::runtime_error(
        fmt::format("{}: its index {} names it, and it is not there: restore it, or move the "
                    "folder's documents away to start again",
                    path.string(), index_path.string()));
  // The shard keeps the blocks whose every document the index names: a block the stop left partly
  // indexed goes, with its entries, and the journal of the batch writes its documents again.
  std::uint64_t keep = entry->block_end();
  if (!block_wholly_indexed(*entry)) {
    keep = entry->block_offset;
    drop_index_entries_of_block(*entry);
  }
  std::error_code error;
  if (std::filesystem::file_size(path, error) != keep && !error) std::filesystem::resize_file(path, keep, error);
  if (error)
    throw std::runtime_error(
        fmt::format("{}: cannot cut it to the {} bytes its index names: {}", path.string(), keep, error.message()));
  shard_number_ = named;
  shard_file_ = entry->file;
  shard_size_ = keep;
  shard_.open(path, std::ios::out | std::ios::app | std::ios::binary);
  if (!shard_)
    throw std::runtime_error(fmt::format("{}: cannot open for appending: {}", path.string(), std::strerror(errno)));
  shard_open_ = true;
}

bool DocumentShardWriter::block_wholly_indexed(const IndexEntry& last) const {
  try {
    DocumentIndexReader reader(folder_);
    return last.line_offset + last.line_bytes + 1 == reader.block_text(last).size();
  } catch (const std::runtime_error&) {
    return false;  // a block that cannot be read back names no document
  }
}

void DocumentShardWriter::drop_index_entries_of_block(const IndexEntry& last) {
  const auto index_path = folder_ / kDocumentIndexFileName;
  const auto of_block = [&](const std::string& line) {
    const auto entry = parse_index_line(line);
    return entry && entry->file == last.file && entry->block_offset == last.block_offset;
  };
  // The index's end, read back further until it reaches a line of another block (or the file's start).
  for (std::size_t count = 256;; count *= 4) {
    const std::vector<std::string> lines = last_lines(index_path, count);
    std::uint64_t bytes = 0;
    std::size_t trailing = 0;
    for (auto line = lines.rbegin(); line != lines.rend() && of_block(*line); ++line, ++trailing)
      bytes += line->size() + 1;
    if (trailing == lines.size() && lines.size() == count) continue;
    std::error_code error;
    const auto size = std::filesystem::file_size(index_path, error);
    if (!error) std::filesystem::resize_file(index_path, size - bytes, error);
    if (error)
      throw std::runtime_error(
          fmt::format("{}: cannot drop the entries of a block cut short: {}", index_path.string(), error.message()));
    return;
  }
}

void DocumentShardWriter::open_shard(std::size_t number) {
  shard_.close();
  shard_number_ = number;
  shard_file_ = shard_name(number, options_.compression);
  shard_size_ = 0;
  const auto path = folder_ / shard_file_;
  shard_.open(path, std::ios::out | std::ios::trunc | std::ios::binary);
  if (!shard_) throw std::runtime_error(fmt::format("{}: cannot create: {}", path.string(), std::strerror(errno)));
  shard_open_ = true;
}

void DocumentShardWriter::add(std::string_view line, std::string point_id, std::string run_name) {
  // An index line is tab-separated: a field that holds a tab or a newline would break it.
  for (const std::string* field : {&point_id, &run_name})
    if (field->find_first_of("\t\n") != std::string::npos)
      throw std::invalid_argument(
          fmt::format("a document's point id or run name holds a tab or a newline: '{}'", *field));
  IndexEntry entry{std::move(point_id), std::move(run_name), {}};
  entry.line_offset = block_.size();
  entry.line_bytes = line.size();
  block_entries_.push_back(std::move(entry));
  block_.append(line);
  block_ += '\n';
  if (block_.size() >= kBlockBytes) flush();
}

void DocumentShardWriter::flush() {
  if (block_entries_.empty()) return;
  // A block goes to a new shard when the current one is full or holds another compression.
  const bool same_compression = shard_open_ && compression_of_file(shard_file_) == options_.compression;
  if (!shard_open_) open_shard(0);
  else if (!same_compression || shard_size_ >= options_.shard_bytes) open_shard(shard_number_ + 1);
  const std::string stored = compress_block(options_.compression, block_);
  append(shard_, folder_ / shard_file_, stored, shard_size_);
  std::string lines;
  for (IndexEntry& entry : block_entries_) {
    entry.file = shard_file_;
    entry.block_offset = shard_size_;
    entry.block_bytes = stored.size();
    lines += index_line(entry);
    lines += '\n';
  }
  append(index_, folder_ / kDocumentIndexFileName, lines, index_size_);
  shard_size_ += stored.size();
  index_size_ += lines.size();
  block_.clear();
  block_entries_.clear();
}

void DocumentShardWriter::append(std::ofstream& out, const std::filesystem::path& path, std::string_view bytes,
                                 std::uint64_t size_before) {
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (out) return;
  const int cause = errno;
  // What part of it reached the file goes again: the file ends where its last whole write ended.
  std::error_code ignored;
  std::filesystem::resize_file(path, size_before, ignored);
  throw std::runtime_error(fmt::format("{}: cannot write: {}", path.string(), std::strerror(cause)));
}

std::set<std::string> DocumentShardWriter::run_names_in_last_entries(std::size_t count) const {
  std::set<std::string> names;
  for (const std::string& line : last_lines(folder_ / kDocumentIndexFileName, count))
    if (const auto entry = parse_index_line(line)) names.insert(entry->run_name);
  return names;
}

}  // namespace ks
