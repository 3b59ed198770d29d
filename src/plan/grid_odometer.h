#pragma once
// A kernel block's grid as an odometer: each slot a digit (one axis, or a zip group whose axes
// advance together), the last slot fastest. The plan walks its positions without storing points;
// a slot knows which of its positions repeat an earlier one and, when asked, whether it holds a value.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/canonical_json.h"
#include "config/sweep_spec.h"

namespace ks {

inline constexpr std::uint64_t kSaturated = std::numeric_limits<std::uint64_t>::max();

// Counts saturate instead of wrapping: a grid of 2^70 points must still read as "too many".
inline std::uint64_t saturating_multiply(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > kSaturated / a) return kSaturated;
  return a * b;
}
inline std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return b > kSaturated - a ? kSaturated : a + b;
}

// One digit of the grid odometer: a single axis, or a zip group whose axes advance together. Values
// are told apart by their canonical text, as point ids are (256 and 256.0 are one value). What a
// slot remembers beyond the sweep file's values is small: the positions that repeat an earlier one,
// and, only once a later block or include entry asks whether the grid holds a point, a hash per
// position.
struct Slot {
  std::vector<const Axis*> axes;
  std::size_t length = 0;
  std::unordered_map<std::size_t, std::size_t> repeats;              // position -> the first position with its values
  mutable std::vector<std::pair<std::size_t, std::size_t>> by_hash;  // (hash of the values, position), sorted

  std::string text_at(std::size_t position) const {
    Json tuple = Json::array();
    for (const Axis* axis : axes) tuple.push_back(axis->values[position]);
    return canonical_json(tuple);
  }

  // The canonical text of the slot's values in a parameter object; nothing when one is missing.
  std::optional<std::string> text_in(const Json& params) const {
    Json tuple = Json::array();
    for (const Axis* axis : axes) {
      const auto value = params.find(axis->name);
      if (value == params.end()) return std::nullopt;
      tuple.push_back(*value);
    }
    return canonical_json(tuple);
  }

  // Every position with its hash, sorted: equal values end up side by side.
  std::vector<std::pair<std::size_t, std::size_t>> hashed_positions() const {
    std::vector<std::pair<std::size_t, std::size_t>> hashed(length);
    for (std::size_t k = 0; k < length; ++k) hashed[k] = {std::hash<std::string>{}(text_at(k)), k};
    std::sort(hashed.begin(), hashed.end());
    return hashed;
  }

  // Integers in strictly rising or falling order cannot repeat: a range, the usual axis of a million
  // values, is told so by comparing neighbours, without the canonical text of each value.
  bool rises_or_falls_strictly() const {
    if (axes.size() != 1) return false;
    const AxisValues& values = axes[0]->values;
    constexpr auto largest = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    const auto int64 = [](const Json& value) {
      return value.is_number_integer() && !(value.is_number_unsigned() && value.get<std::uint64_t>() > largest);
    };
    return std::all_of(values.begin(), values.end(), int64) &&
           (std::adjacent_find(values.begin(), values.end(), std::greater_equal<>()) == values.end() ||
            std::adjacent_find(values.begin(), values.end(), std::less_equal<>()) == values.end());
  }

  void find_repeats() {
    if (rises_or_falls_strictly()) return;
    const auto hashed = hashed_positions();
    for (std::size_t run = 0; run < hashed.size();) {
      std::size_t end = run + 1;
      while (end < hashed.size() && hashed[end].first == hashed[run].first) ++end;
      // Positions of one hash, in order: each repeats the first earlier one of equal text.
      for (std::size_t i = run + 1; i < end; ++i) {
        const std::string text = text_at(hashed[i].second);
        for (std::size_t j = run; j < i; ++j) {
          if (repeats.contains(hashed[j].second) || text_at(hashed[j].second) != text) continue;
          repeats[hashed[i].second] = hashed[j].second;
          break;
        }
      }
      run = end;
    }
  }

  bool holds(const std::string& text) const {
    if (by_hash.size() != length) by_hash = hashed_positions();
    const std::size_t hash = std::hash<std::string>{}(text);
    auto it = std::lower_bound(by_hash.begin(), by_hash.end(), std::make_pair(hash, std::size_t{0}));
    for (; it != by_hash.end() && it->first == hash; ++it)
      if (text_at(it->second) == text) return true;
    return false;
  }
};

// The grid's slots in odometer order: grid axes in file order, a zip group at the position of the
// earliest of its axes in the grid. A zip group naming no axis, an axis zipped twice or zipped axes
// of different lengths throw SweepFileError at `zip_key` ("kernels[2].zip").
std::vector<Slot> grid_slots(const KernelBlock& block, const std::string& zip_key);

// Points of the grid before exclude: the product of the slot lengths. A block without grid axes
// contributes no grid point (its points come from include).
std::uint64_t grid_combinations(const std::vector<Slot>& slots);

// Moves the odometer one step, the last slot fastest. False once every combination was visited.
bool advance(std::vector<std::size_t>& position, const std::vector<Slot>& slots);

// The parameters at a position: each slot's axes with their values there.
Json slot_values(const std::vector<Slot>& slots, const std::vector<std::size_t>& position);

}  // namespace ks
