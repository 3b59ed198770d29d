#include "common/point_id_set.h"

#include <algorithm>
#include <cstring>
#include <limits>
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
  Sha256 hash;
  hash.update(id);
  return hash.finish();
}

std::string point_key_hex(const PointKey& key) { return hex_of(key); }

void PointIdSet::add(const PointKey& key) {
  keys_.push_back(key);
  sealed_ = false;
}

std::size_t PointIdSet::bucket(const PointKey& key) const {
  const std::uint32_t leading = std::uint32_t{key[0]} << 24 | std::uint32_t{key[1]} << 16 | std::uint32_t{key[2]} << 8 | key[3];
  return bits_ == 0 ? 0 : leading >> (32 - bits_);
}

void PointIdSet::seal() {
  std::sort(keys_.begin(), keys_.end(), PointKeyLess());
  keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
  if (keys_.size() > std::numeric_limits<std::uint32_t>::max()) throw std::length_error("PointIdSet: more than 2^32 ids");
  bits_ = 0;
  while (bits_ < 24 && (std::size_t{1} << bits_) < keys_.size()) ++bits_;  // about a key a bucket
  starts_.assign((std::size_t{1} << bits_) + 1, 0);
  for (const PointKey& key : keys_) ++starts_[bucket(key) + 1];
  for (std::size_t b = 1; b < starts_.size(); ++b) starts_[b] += starts_[b - 1];
  sealed_ = true;
}

bool PointIdSet::contains(const PointKey& key) const {
  if (!sealed_) throw std::logic_error("PointIdSet::contains before seal()");
  if (keys_.empty()) return false;
  const std::size_t b = bucket(key);
  for (std::uint32_t i = starts_[b]; i < starts_[b + 1]; ++i)
    if (std::memcmp(keys_[i].data(), key.data(), key.size()) == 0) return true;
  return false;
}

}  // namespace ks
