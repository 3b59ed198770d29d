#include "plan/point.h"

#include "common/canonical_json.h"
#include "common/digest.h"

namespace ks {

Json Point::identity() const {
  return Json{{"implementation", implementation}, {"kernel", kernel}, {"mode", mode}, {"params", params}};
}

// Canonical JSON of everything that decides an instance's setup (all but the mode), so two points
// share a key exactly when one instance can serve both.
std::string Point::shape_key() const {
  return canonical_json(Json{{"implementation", implementation}, {"kernel", kernel}, {"params", params}});
}

std::string point_id(const Point& point) { return sha256_hex(canonical_json(point.identity())); }

}  // namespace ks
