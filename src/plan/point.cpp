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

// canonical_json(point.identity()) written directly: the identity's keys are already in canonical
// order, and its parameters are not copied into it (a plan of millions of points digests each, in a
// buffer each thread keeps).
PointKey point_digest(const Point& point) {
  thread_local std::string text;
  text = "{\"implementation\":";
  append_canonical_string(text, point.implementation);
  text += ",\"kernel\":";
  append_canonical_string(text, point.kernel);
  text += ",\"mode\":";
  append_canonical_string(text, point.mode);
  text += ",\"params\":";
  append_canonical_json(text, point.params);
  text += '}';
  return sha256_bytes(text);
}

}  // namespace ks
