#pragma once
// How a block of jsonl document lines is stored in a shard: as it is, or compressed as one gzip member
// or one zstd frame. A compressed shard is a sequence of such blocks, which `zcat` and `zstdcat` read
// as one stream; the index (document_index.h) records where each block starts, so one document is
// found by decompressing only its block.
#include <filesystem>
#include <string>
#include <string_view>

namespace ks {

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

}  // namespace ks
