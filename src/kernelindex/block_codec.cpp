#include "kernelindex/document_index.h"

#include <stdexcept>

#include <fmt/format.h>
#include <zlib.h>
#include <zstd.h>

namespace ks {
namespace {

constexpr int kZstdLevel = 3;             // zstd's default: fast enough to keep up with rank 0's flushes
constexpr int kGzipWindowBits = 15 + 16;  // zlib: the largest window, with a gzip header and trailer

std::string gzip(std::string_view text) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("gzip: cannot start a compressor");
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (result != Z_STREAM_END)
    throw std::runtime_error(fmt::format("gzip: cannot compress a block (zlib error {})", result));
  return out;
}

std::string gunzip(std::string_view stored) {
  z_stream stream{};
  if (inflateInit2(&stream, kGzipWindowBits) != Z_OK) throw std::runtime_error("gzip: cannot start a decompressor");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(stored.data()));
  stream.avail_in = static_cast<uInt>(stored.size());
  std::string out;
  char buffer[1 << 16];
  int result = Z_OK;
  while (result == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof buffer;
    result = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - stream.avail_out);
  }
  const bool whole = result == Z_STREAM_END && stream.avail_in == 0;
  inflateEnd(&stream);
  if (!whole) throw std::runtime_error("gzip: the block is not one whole gzip member");
  return out;
}

std::string zstd(std::string_view text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  const std::size_t size = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), kZstdLevel);
  if (ZSTD_isError(size))
    throw std::runtime_error(fmt::format("zstd: cannot compress a block: {}", ZSTD_getErrorName(size)));
  out.resize(size);
  return out;
}

std::string unzstd(std::string_view stored) {
  const unsigned long long size = ZSTD_getFrameContentSize(stored.data(), stored.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN ||
      ZSTD_findFrameCompressedSize(stored.data(), stored.size()) != stored.size())
    throw std::runtime_error("zstd: the block is not one whole zstd frame");
  std::string out(size, '\0');
  const std::size_t made = ZSTD_decompress(out.data(), out.size(), stored.data(), stored.size());
  if (ZSTD_isError(made) || made != size)
    throw std::runtime_error(
        fmt::format("zstd: cannot decompress a block: {}", ZSTD_isError(made) ? ZSTD_getErrorName(made) : "short"));
  return out;
}

// Each compression's name, shard ending and block functions, in the order of the enum.
struct Codec {
  std::string_view name, suffix;
  std::string (*compress)(std::string_view);
  std::string (*decompress)(std::string_view);
};

std::string as_is(std::string_view text) { return std::string(text); }

constexpr Codec kCodecs[] = {{"none", "", as_is, as_is}, {"gzip", ".gz", gzip, gunzip}, {"zstd", ".zst", zstd, unzstd}};

const Codec& codec(Compression compression) { return kCodecs[static_cast<std::size_t>(compression)]; }

}  // namespace

Compression compression_named(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kCodecs); ++i)
    if (kCodecs[i].name == name) return static_cast<Compression>(i);
  throw std::invalid_argument(fmt::format("compression '{}': expected none, gzip or zstd", name));
}

std::string_view compression_suffix(Compression compression) { return codec(compression).suffix; }

Compression compression_of_file(const std::filesystem::path& file) {
  const std::string extension = file.extension().string();
  for (std::size_t i = 1; i < std::size(kCodecs); ++i)
    if (kCodecs[i].suffix == extension) return static_cast<Compression>(i);
  return Compression::none;
}

std::string compress_block(Compression compression, std::string_view text) { return codec(compression).compress(text); }

std::string decompress_block(Compression compression, std::string_view stored) {
  return codec(compression).decompress(stored);
}

}  // namespace ks
