// The checksum of a row's strings (strings_check.h): the part that does not depend on the record.
#include "store/strings_check.h"

#include <charconv>
#include <cstddef>

#include <fmt/format.h>

namespace ks {

void StringsCheck::add(std::string_view text) {
  char length[24];
  const auto end = std::to_chars(length, length + sizeof length, text.size()).ptr;
  hash_.update(std::string_view(length, static_cast<std::size_t>(end - length)));
  hash_.update(":");
  hash_.update(text);
}

std::uint64_t StringsCheck::finish() {
  const auto digest = hash_.finish();
  std::uint64_t check = 0;
  for (std::size_t i = 0; i < 8; ++i) check = check << 8 | digest[i];  // the first 16 hex digits
  return check;
}

std::string unchecked_row_message(std::uint64_t row, std::string_view table) {
  return fmt::format("row {} of {}: its strings do not match their checksum (column strings_check)", row, table);
}

}  // namespace ks
