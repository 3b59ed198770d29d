#pragma once
// Point ids in 32 bytes each. A point id is the hex SHA-256 of the point: its key is those 32 bytes.
// A resume asks of every point of the plan whether the results file holds it, and status compares
// the plan with the file: for a million points, hash sets of the id strings took 150 MB and seconds,
// sorted arrays of keys take 32 MB and a fraction of one.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace ks {

using PointKey = std::array<unsigned char, 32>;

// The order of keys as memcmp sees them: C++20's operator< on an array compares byte by byte, several
// times slower, and sorting a million keys is what status and a resume do.
struct PointKeyLess {
  bool operator()(const PointKey& a, const PointKey& b) const { return std::memcmp(a.data(), b.data(), a.size()) < 0; }
};

// The key of an id: its bytes when it is a lowercase hex SHA-256 (every id kernelsweep makes), the
// SHA-256 of the text otherwise (an id of a file imported from another tool).
PointKey point_key(std::string_view id);
// Lowercase hex: the id again, for a key of an id kernelsweep made.
std::string point_key_hex(const PointKey& key);

class PointIdSet {
 public:
  void reserve(std::size_t ids) { keys_.reserve(ids); }
  // Ids are added in any order, repeats allowed; contains() answers once seal() has sorted them.
  void add(std::string_view id) { add(point_key(id)); }
  void add(const PointKey& key);
  void seal();
  bool contains(std::string_view id) const { return contains(point_key(id)); }
  bool contains(const PointKey& key) const;
  std::size_t size() const { return keys_.size(); }
  bool empty() const { return keys_.empty(); }

 private:
  // Keys are uniformly spread (SHA-256s), so their leading bits say where in the sorted array a key
  // would be: starts_[b] is the first key whose leading `bits_` bits are b. A lookup reads one or
  // two keys, where a binary search over a million would miss the cache twenty times.
  std::size_t bucket(const PointKey& key) const;
  std::vector<PointKey> keys_;
  std::vector<std::uint32_t> starts_;
  unsigned bits_ = 0;
  bool sealed_ = true;
};

}  // namespace ks
