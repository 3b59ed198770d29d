#include "common/bytes.h"

#include <stdexcept>

namespace ks {

void need_bytes(std::string_view bytes, std::size_t offset, std::size_t count) {
  if (offset > bytes.size() || bytes.size() - offset < count)
    throw std::runtime_error("a message's bytes end early (" + std::to_string(bytes.size()) + " bytes, " +
                             std::to_string(offset + count) + " needed)");
}

void append_sized_bytes(std::string& out, std::string_view text) {
  append_value(out, static_cast<std::uint64_t>(text.size()));
  out.append(text);
}

std::string_view sized_bytes_at(std::string_view bytes, std::size_t& offset) {
  const auto size = value_at<std::uint64_t>(bytes, offset);
  need_bytes(bytes, offset, size);
  const std::string_view text = bytes.substr(offset, size);
  offset += size;
  return text;
}

}  // namespace ks
