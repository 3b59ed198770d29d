#include "kernelindex/pending_documents.h"

#include <cerrno>
#include <fstream>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

namespace ks {
namespace {

constexpr std::size_t kWriteBufferBytes = std::size_t{1} << 20;

}  // namespace

void PendingDocuments::hold(const Batch& batch) {
  const nlohmann::json header = {{"rows_before", batch.rows_before}, {"count", batch.lines.size()}};
  // A batch's lines (about 5 KB each) in a few writes: with the stream's own buffer (8 KB), each line
  // took a system call of its own.
  std::vector<char> buffer(kWriteBufferBytes);
  std::ofstream out;
  out.rdbuf()->pubsetbuf(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  out.open(path_, std::ios::out | std::ios::trunc | std::ios::binary);
  out << header.dump() << '\n';
  for (const std::string& line : batch.lines) out << line << '\n';
  out.close();  // a full disk often shows only when the buffer reaches the file
  if (!out) {
    const int cause = errno != 0 ? errno : EIO;
    clear();
    throw std::system_error(cause, std::generic_category(), path_.string() + ": cannot write the pending documents");
  }
}

std::optional<PendingDocuments::Batch> PendingDocuments::read() const {
  std::ifstream in(path_, std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  const auto header = nlohmann::json::parse(line, nullptr, false);
  if (!header.is_object() || !header.contains("rows_before") || !header.contains("count") ||
      !header["rows_before"].is_number_unsigned() || !header["count"].is_number_unsigned())
    return std::nullopt;
  Batch batch;
  batch.rows_before = header["rows_before"].get<std::uint64_t>();
  const auto count = header["count"].get<std::uint64_t>();
  // Only whole lines count: the last one of a journal cut short has no newline.
  while (batch.lines.size() < count && std::getline(in, line) && !in.eof()) batch.lines.push_back(line);
  if (batch.lines.size() != count) return std::nullopt;
  return batch;
}

void PendingDocuments::clear() {
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
}

}  // namespace ks
