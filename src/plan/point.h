#pragma once
// A point: one (kernel, implementation, mode, parameters) to measure. Its id is the SHA-256 of its
// canonical JSON, so it is the same on every run and machine.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/point_id_set.h"

namespace ks {

using Json = nlohmann::json;

// Where a point comes from in the sweep file: enough for PointEnumerator::group_at to make its group
// (the modes of one implementation of one parameter combination) again.
struct PointSource {
  std::uint32_t block = 0;           // kernels[block]
  std::uint32_t implementation = 0;  // index into the block's implementations
  std::uint64_t combination = 0;     // a grid position (odometer order), or the grid's size + an include entry
};

struct Point {
  std::size_t index = 0;  // position in the plan
  std::string kernel;
  std::string implementation;
  std::string mode;
  Json params;  // every parameter of the kernel, defaults filled in (an object)
  double timeout_s = 300;
  PointKey key{};      // point_digest(*this), set by the enumerator
  PointSource source;  // set by the enumerator; not part of the identity
  // Which measurement of the point this is, from 0 (a protocol's `repetitions`); not part of the
  // identity: every repetition is the same point.
  std::int32_t repetition = 0;

  // The point's id: `key` in lowercase hex, as the results file and the documents name the point.
  // Spelled out only where it is shown or stored: a plan walk of a million points needs only keys.
  std::string id() const { return point_key_hex(key); }
  // {"implementation":…,"kernel":…,"mode":…,"params":{…}}: what the id digests.
  Json identity() const;
  // Points of one (kernel, implementation, params) share a setup: the same key for every mode.
  std::string shape_key() const;
};

// SHA-256 of canonical_json(point.identity()) as its 32 bytes: the point's key
// (common/point_id_set.h); Point::id() spells it in hex.
PointKey point_digest(const Point& point);

struct Plan {
  std::vector<Point> points;
  // Consecutive points sharing a shape_key (the modes of one shape): the unit the work queue hands
  // out, as [first, last) index ranges into points.
  struct Group {
    std::size_t first = 0, last = 0;
  };
  std::vector<Group> groups;
};

}  // namespace ks
