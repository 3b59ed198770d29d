#pragma once
// Writes kernelindex objects as jsonl shards: a bounded number of files however many runs a sweep has,
// which parallel filesystems (Lustre, GPFS) hold far better than a file per run. The folder holds
// kernelindex-0000.jsonl, kernelindex-0001.jsonl, ... (ending .gz or .zst when compressed) and the
// index kernelindex.index (document_index.h), from point id and run name to shard and offset.
// A shard holds exactly the documents its index names, in index order.
//
// Lines are added to a block in memory; flush() writes the block to the current shard, then the
// block's index lines. A shard is closed once it holds shard_bytes, and the next block starts the next
// one. Opening a folder again (a resumed run) goes on from what the index names: bytes of a shard past
// the index's last block, shards the index does not name yet, and a last block not all of whose
// documents reached the index (with the entries it has) were never all written and are cut off; the
// journal of the batch being stored (pending_documents.h) writes them again.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kernelindex/document_index.h"

namespace ks {

struct ShardOptions {
  Compression compression = Compression::none;
  std::uint64_t shard_bytes = std::uint64_t{1} << 30;  // a shard is closed once it holds this many bytes
};

class DocumentShardWriter {
 public:
  // Throws std::runtime_error naming the file when the index or a shard cannot be opened or cut.
  DocumentShardWriter(std::filesystem::path folder, ShardOptions options);

  // A document's compact line (no newline), with the point and run it is of (neither may hold a tab
  // or a newline: std::invalid_argument). A block that reaches kBlockBytes is flushed here: reading
  // one document decompresses at most that much.
  static constexpr std::size_t kBlockBytes = std::size_t{4} << 20;
  void add(std::string_view line, std::string point_id, std::string run_name);
  // Writes the lines added since the last flush as one block, then their index entries. Throws
  // std::runtime_error naming the file when a write fails; the file is cut back to what it held
  // (the index then names none of the block).
  void flush();

  // The run names of the index's last `count` entries: where the documents of the last batch stored
  // would be.
  std::set<std::string> run_names_in_last_entries(std::size_t count) const;

  // A shard's name: kernelindex-NNNN.jsonl and the compression's ending.
  static std::string shard_name(std::size_t number, Compression compression);
  // Whether a file name is a shard's (any number, any compression).
  static bool is_shard_name(const std::string& name);

 private:
  void go_on_from_index();
  bool block_wholly_indexed(const IndexEntry& last) const;
  void drop_index_entries_of_block(const IndexEntry& last);
  void open_shard(std::size_t number);
  // Appends and flushes; a write that fails cuts the file back to size_before and throws.
  void append(std::ofstream& out, const std::filesystem::path& path, std::string_view bytes, std::uint64_t size_before);

  std::filesystem::path folder_;
  ShardOptions options_;
  std::ofstream index_;
  std::ofstream shard_;
  std::size_t shard_number_ = 0;
  std::string shard_file_;
  std::uint64_t shard_size_ = 0;
  std::uint64_t index_size_ = 0;
  bool shard_open_ = false;
  std::string block_;
  std::vector<IndexEntry> block_entries_;
};

}  // namespace ks
