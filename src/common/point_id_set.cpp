#include "common/point_id_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

#include "common/digest.h"

namespace ks {
namespace {

// Each character's value as a lowercase hex digit, 16 for any other: a table, since a resume and
// status decode a million ids.
constexpr std::array<unsigned char, 256> kHexValue = [] {
  std::array<unsigned char, 256> value{};
  value.fill(16);
  for (int c = '0'; c <= '9'; ++c) value[c] = static_cast<unsigned char>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c) value[c] = static_cast<unsigned char>(c - 'a' + 10);
  return value;
}();

// The 32 bytes of a lowercase hex SHA-256; false when `hex` is not one.
bool decode_digest(std::string_view hex, PointKey& out) {
  if (hex.size() != 64) return false;
  unsigned bad = 0;
  for (std::size_t i = 0; i < 32; ++i) {
    const unsigned high = kHexValue[static_cast<unsigned char>(hex[2 * i])];
    const unsigned low = kHexValue[static_cast<unsigned char>(hex[2 * i + 1])];
    bad |= (high | low) & 16;
    out[i] = static_cast<unsigned char>(high << 4 | (low & 15));
  }
  return bad == 0;
}

}  // namespace

PointKey point_key(std::string_view id) {
  PointKey key;
  if (decode_digest(id, key)) return key;
  return sha256_bytes(id);
}

// SHA-256 of the point's 32 bytes followed by "repetition N", made in a buffer on the stack: every
// row of a sweep with repetitions is keyed through here, a million times in a resume.
PointKey repetition_key(const PointKey& point, std::int64_t repetition) {
  if (repetition == 0) return point;
  std::array<char, 64> bytes;
  std::memcpy(bytes.data(), point.data(), point.size());
  const auto end =
      fmt::format_to_n(bytes.data() + point.size(), bytes.size() - point.size(), "repetition {}", repetition);
  return sha256_bytes(std::string_view(bytes.data(), end.out));
}

std::string point_key_hex(const PointKey& key) { return hex_of(key); }

void PointIdSet::add(const PointKey& key) {
  keys_.push_back(key);
  sealed_ = false;
}

void PointIdSet::seal() {
  std::sort(keys_.begin(), keys_.end(), PointKeyLess());
  keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
  sealed_ = true;
}

const PointKeys& PointIdSet::sorted() const {
  if (!sealed_) throw std::logic_error("PointIdSet read before seal()");
  return keys_;
}

bool PointIdSet::contains(const PointKey& key) const {
  return std::binary_search(sorted().begin(), sorted().end(), key, PointKeyLess());
}

void add_repetition_keys(PositionedKeys& keys, std::int64_t repetitions) {
  const std::size_t points = keys.size();
  keys.reserve(points * static_cast<std::size_t>(repetitions));
  for (std::int64_t r = 1; r < repetitions; ++r)
    for (std::size_t i = 0; i < points; ++i)
      keys.emplace_back(repetition_key(keys[i].first, r), static_cast<std::uint64_t>(r) * points + keys[i].second);
}

void sort_by_key(PositionedKeys& keys) {
  std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return PointKeyLess()(a.first, b.first); });
}

}  // namespace ks
