#pragma once
// Point ids in 32 bytes each. A point id is the hex SHA-256 of the point: its key is those 32 bytes.
// A resume asks of every point of the plan whether the results file holds it, and status compares
// the plan with the file: for a million points, hash sets of the id strings took 150 MB and seconds,
// sorted arrays of keys take 32 MB and a fraction of one.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "common/huge_pages.h"

namespace ks {

using PointKey = std::array<unsigned char, 32>;
using PointKeys = LargeVector<PointKey>;

// The order of keys as memcmp sees them, its first eight bytes compared as one big-endian number:
// keys are SHA-256s, which those bytes tell apart but once in 2^64, and sorting a million keys (what
// status and a resume do) then takes no call to memcmp per comparison.
struct PointKeyLess {
  static std::uint64_t leading(const PointKey& key) {
    std::uint64_t value;
    std::memcpy(&value, key.data(), sizeof value);
    if constexpr (std::endian::native == std::endian::little) value = __builtin_bswap64(value);
    return value;
  }
  bool operator()(const PointKey& a, const PointKey& b) const {
    const std::uint64_t x = leading(a), y = leading(b);
    if (x != y) return x < y;
    return std::memcmp(a.data() + 8, b.data() + 8, a.size() - 8) < 0;
  }
};

// The key of an id: its bytes when it is a lowercase hex SHA-256 (every id kernelsweep makes), the
// SHA-256 of the text otherwise (an id of a file imported from another tool).
PointKey point_key(std::string_view id);
// The key of one measurement of a point: the point's own key for its first (repetition 0), the
// SHA-256 of the key and the repetition's number for the others (a protocol's `repetitions`), so that
// a resume and status tell a point's measurements apart as they tell points apart.
PointKey repetition_key(const PointKey& point, std::int64_t repetition);

// Lowercase hex: the id again, for a key of an id kernelsweep made.
std::string point_key_hex(const PointKey& key);

// A set of keys: added in any order, repeats allowed, then sealed (sorted) once.
class PointIdSet {
 public:
  void reserve(std::size_t ids) { keys_.reserve(ids); }
  void add(std::string_view id) { add(point_key(id)); }
  void add(const PointKey& key);
  void seal();
  bool contains(std::string_view id) const { return contains(point_key(id)); }
  bool contains(const PointKey& key) const;
  // The keys, sorted (PointKeyLess), each once; once sealed.
  const PointKeys& sorted() const;
  std::size_t size() const { return keys_.size(); }
  bool empty() const { return keys_.empty(); }

 private:
  PointKeys keys_;
  bool sealed_ = true;
};

// Keys each with its position in a sequence (a plan), 40 bytes a key. Sorted by key and walked beside
// another sorted side (a results file's points), what one has and the other lacks comes out of one
// linear pass: a lookup per key in a million would miss the cache once or twice each.
using PositionedKeys = LargeVector<std::pair<PointKey, std::uint64_t>>;
void sort_by_key(PositionedKeys& keys);

// A plan's keys (`keys`, each at its position 0 .. n-1, n points) followed by the keys of their
// further repetitions: repetition r of the point at position i at position r * n + i.
void add_repetition_keys(PositionedKeys& keys, std::int64_t repetitions);

}  // namespace ks
