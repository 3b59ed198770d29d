#include "kernelindex/document_index.h"

#include <algorithm>
#include <charconv>
#include <ranges>
#include <stdexcept>

#include <fmt/format.h>

namespace ks {
namespace {

constexpr std::size_t kIndexFields = 7;

bool parse_number(std::string_view text, std::uint64_t& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && !text.empty();
}

// The end of a file of `size` bytes, read back a block at a time until it holds more than `newlines`
// newlines (the text before the first of them may be part of a longer line), or the whole file.
std::string tail(std::ifstream& in, std::uint64_t size, std::size_t newlines) {
  std::string tail;
  for (std::uint64_t start = size;
       start > 0 && static_cast<std::size_t>(std::count(tail.begin(), tail.end(), '\n')) <= newlines;) {
    const std::uint64_t length = std::min<std::uint64_t>(start, 1 << 20);
    start -= length;
    std::string block(length, '\0');
    in.seekg(static_cast<std::streamoff>(start));
    in.read(block.data(), static_cast<std::streamsize>(length));
    tail.insert(0, block);
  }
  return tail;
}

}  // namespace

std::string index_line(const IndexEntry& entry) {
  return fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}", entry.point_id, entry.run_name, entry.file, entry.block_offset,
                     entry.block_bytes, entry.line_offset, entry.line_bytes);
}

std::optional<IndexEntry> parse_index_line(std::string_view line) {
  if (line.empty() || line.front() == '#') return std::nullopt;
  std::vector<std::string_view> fields;
  for (const auto field : std::views::split(line, '\t')) fields.emplace_back(field.begin(), field.end());
  if (fields.size() != kIndexFields) return std::nullopt;
  IndexEntry entry{std::string(fields[0]), std::string(fields[1]), std::string(fields[2])};
  if (entry.file.empty() || entry.file.find('/') != std::string::npos) return std::nullopt;
  if (!parse_number(fields[3], entry.block_offset) || !parse_number(fields[4], entry.block_bytes) ||
      !parse_number(fields[5], entry.line_offset) || !parse_number(fields[6], entry.line_bytes))
    return std::nullopt;
  return entry;
}

std::vector<std::string> last_lines(const std::filesystem::path& file, std::size_t count) {
  std::vector<std::string> lines;
  std::ifstream in(file, std::ios::binary);
  if (!in || count == 0) return lines;
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  const std::string end_of_file = tail(in, size, count);
  for (std::size_t begin = 0, end; begin < end_of_file.size(); begin = end + 1) {
    end = end_of_file.find('\n', begin);
    if (end == std::string::npos) break;  // a line cut short
    lines.push_back(end_of_file.substr(begin, end - begin));
  }
  if (end_of_file.size() < size && !lines.empty()) lines.erase(lines.begin());
  if (lines.size() > count) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(count));
  return lines;
}

void drop_line_cut_short(const std::filesystem::path& file) {
  std::error_code error;
  const auto size = std::filesystem::file_size(file, error);
  if (error || size == 0) return;
  std::ifstream in(file, std::ios::binary);
  const std::string end_of_file = tail(in, size, 0);  // to the last newline
  const std::size_t newline = end_of_file.rfind('\n');
  const std::uint64_t keep = newline == std::string::npos ? 0 : size - end_of_file.size() + newline + 1;
  if (keep == size) return;
  std::filesystem::resize_file(file, keep, error);
  if (error)
    throw std::runtime_error(fmt::format("{}: cannot drop a line cut short: {}", file.string(), error.message()));
}

DocumentIndexReader::DocumentIndexReader(std::filesystem::path folder) : folder_(std::move(folder)) {
  if (!std::filesystem::is_regular_file(index_path()))
    throw std::runtime_error(
        fmt::format("{}: no document index here (the folder holds no jsonl documents)", index_path().string()));
}

void DocumentIndexReader::for_each_entry(const std::function<void(const IndexEntry&)>& visit) const {
  std::ifstream in(index_path(), std::ios::binary);
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line.front() == '#') continue;
    const auto entry = parse_index_line(line);
    if (!entry)
      throw std::runtime_error(
          fmt::format("{}:{}: not an index entry (point_id, run, file and four offsets, "
                      "tab-separated): {}",
                      index_path().string(), number, line.substr(0, 80)));
    visit(*entry);
  }
}

const std::string& DocumentIndexReader::block_text(const IndexEntry& entry) {
  if (have_block_ && block_file_ == entry.file && block_offset_ == entry.block_offset) return block_;
  const auto path = folder_ / entry.file;
  auto [shard, added] = shards_.try_emplace(entry.file);
  if (added) shard->second.open(path, std::ios::binary);
  std::ifstream& in = shard->second;
  std::string stored(entry.block_bytes, '\0');
  in.clear();
  in.seekg(static_cast<std::streamoff>(entry.block_offset));
  in.read(stored.data(), static_cast<std::streamsize>(stored.size()));
  if (!in)
    throw std::runtime_error(fmt::format("{}: cannot read the block of {} bytes at offset {}", path.string(),
                                         entry.block_bytes, entry.block_offset));
  try {
    block_ = decompress_block(compression_of_file(path), stored);
  } catch (const std::runtime_error& e) {
    have_block_ = false;
    throw std::runtime_error(
        fmt::format("{}: the block at offset {}: {}", path.string(), entry.block_offset, e.what()));
  }
  block_file_ = entry.file;
  block_offset_ = entry.block_offset;
  have_block_ = true;
  return block_;
}

std::string DocumentIndexReader::read_line(const IndexEntry& entry) {
  const std::string& block = block_text(entry);
  if (entry.line_offset + entry.line_bytes > block.size())
    throw std::runtime_error(fmt::format("{}: the document of run {} ends past its block ({} bytes)",
                                         (folder_ / entry.file).string(), entry.run_name, block.size()));
  return block.substr(entry.line_offset, entry.line_bytes);
}

}  // namespace ks
