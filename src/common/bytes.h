#pragma once
// Messages between processes of one build of kernelsweep, as bytes: numbers as their bytes (NaN stays
// NaN), strings and vectors after their length. A rank's records to rank 0, and a measure request and
// its result between a rank and the C++ worker of its own executable, travel so: reading JSON took a
// sixth of rank 0's time in a large sweep. The readers move `offset` past what they read and throw
// std::runtime_error when the bytes end before it does.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ks {

// Throws unless `count` bytes follow `offset`.
void need_bytes(std::string_view bytes, std::size_t offset, std::size_t count);

template <typename T> void append_value(std::string& out, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

template <typename T> T value_at(std::string_view bytes, std::size_t& offset) {
  need_bytes(bytes, offset, sizeof(T));
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  offset += sizeof value;
  return value;
}

void append_sized_bytes(std::string& out, std::string_view text);
std::string_view sized_bytes_at(std::string_view bytes, std::size_t& offset);

template <typename T> void append_values(std::string& out, const std::vector<T>& values) {
  static_assert(std::is_trivially_copyable_v<T>);
  append_value(out, static_cast<std::uint64_t>(values.size()));
  if (!values.empty()) out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

template <typename T> std::vector<T> values_at(std::string_view bytes, std::size_t& offset) {
  const auto count = value_at<std::uint64_t>(bytes, offset);
  // A count too large to multiply is refused as bytes ending early.
  need_bytes(bytes, offset, count > bytes.size() ? bytes.size() + 1 : count * sizeof(T));
  std::vector<T> values(count);
  if (count > 0) std::memcpy(values.data(), bytes.data() + offset, count * sizeof(T));  // data() of none may be null
  offset += count * sizeof(T);
  return values;
}

}  // namespace ks
