#pragma once
// The index of a folder of jsonl document shards (document_shards.h): the file kernelindex.index, one
// line per document in the order written, tab-separated:
//
//   point_id  run_name  shard_file  block_offset  block_bytes  line_offset  line_bytes
//
// A document is line_bytes bytes at line_offset of the block that starts at block_offset of
// shard_file and takes block_bytes there; a block is stored as Compression below says (as it is, one
// gzip member or one zstd frame; the shard file's name ends in .jsonl, .jsonl.gz or .jsonl.zst). Lines
// that begin with '#' are comments. A line is written only once its block is in its shard, so the
// index never names bytes that are not there.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ks {

// How a block of jsonl document lines is stored in a shard (block_codec.cpp): as it is, or compressed
// as one gzip member or one zstd frame. A compressed shard is a sequence of such blocks, which `zcat`
// and `zstdcat` read as one stream; the index records where each block starts, so one document is
// found by decompressing only its block.
enum class Compression { none, gzip, zstd };

// "none", "gzip" or "zstd" named: throws std::invalid_argument naming the three.
Compression compression_named(std::string_view name);

// The shard file name's ending for it: "", ".gz" or ".zst".
std::string_view compression_suffix(Compression compression);
// What a shard's name says it holds (its ending, as compression_suffix gives it).
Compression compression_of_file(const std::filesystem::path& file);

// The block as stored. Throws std::runtime_error when the library refuses.
std::string compress_block(Compression compression, std::string_view text);
// The block's text again. Throws std::runtime_error when `stored` is not one whole block.
std::string decompress_block(Compression compression, std::string_view stored);

struct IndexEntry {
  std::string point_id;
  std::string run_name;
  std::string file;  // the shard's name, in the index's folder
  std::uint64_t block_offset = 0, block_bytes = 0;
  std::uint64_t line_offset = 0, line_bytes = 0;

  std::uint64_t block_end() const { return block_offset + block_bytes; }
};

inline constexpr const char* kDocumentIndexFileName = "kernelindex.index";

// The entry's line, without its newline.
std::string index_line(const IndexEntry& entry);
// The entry a line holds; nothing for a comment, an empty line or a line that is not an entry.
std::optional<IndexEntry> parse_index_line(std::string_view line);

// The last `count` whole lines of a text file (fewer when it has fewer), read back from its end: a
// last line without its newline is not counted. A missing file has none.
std::vector<std::string> last_lines(const std::filesystem::path& file, std::size_t count);

// Cuts off a text file's last line when it has no newline: what a stop left half-written. Throws
// std::runtime_error naming the file when it cannot be cut.
void drop_line_cut_short(const std::filesystem::path& file);

// Reads the documents of a shard folder through its index; a block read is kept for the next document,
// so reading in index order decompresses each block once.
class DocumentIndexReader {
 public:
  // Throws std::runtime_error naming the index when the folder has none.
  explicit DocumentIndexReader(std::filesystem::path folder);

  // Every entry, in index order. Throws std::runtime_error naming the index and the line for a line
  // that is not an entry.
  void for_each_entry(const std::function<void(const IndexEntry&)>& visit) const;
  // The document's line (its kernelindex object, compact). Throws std::runtime_error naming the shard
  // when the block cannot be read or the entry does not fit in it.
  std::string read_line(const IndexEntry& entry);
  // The whole text of the entry's block, decompressed. Throws as read_line.
  const std::string& block_text(const IndexEntry& entry);

  std::filesystem::path index_path() const { return folder_ / kDocumentIndexFileName; }

 private:
  std::filesystem::path folder_;
  std::map<std::string, std::ifstream> shards_;
  std::string block_file_;
  std::uint64_t block_offset_ = 0;
  std::string block_;  // decompressed
  bool have_block_ = false;
};

}  // namespace ks
