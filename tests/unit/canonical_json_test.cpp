// Canonical JSON strings: RFC 8785 escaping, and the same text nlohmann writes for valid UTF-8.
#include <gtest/gtest.h>

#include "common/canonical_json.h"

namespace ks {
namespace {

TEST(CanonicalJsonStrings, EscapesAsRfc8785) {
  EXPECT_EQ(canonical_json(Json("plain")), "\"plain\"");
  EXPECT_EQ(canonical_json(Json("q\"b\\s/")), "\"q\\\"b\\\\s/\"");
  EXPECT_EQ(canonical_json(Json("\b\f\n\r\t")), "\"\\b\\f\\n\\r\\t\"");
  EXPECT_EQ(canonical_json(Json(std::string("\x01\x1f", 2))), "\"\\u0001\\u001f\"");
  EXPECT_EQ(canonical_json(Json("H200 · sm_90 €")), "\"H200 · sm_90 €\"");
}

TEST(CanonicalJsonStrings, AgreesWithNlohmannOnEveryByteBelow128) {
  for (int c = 1; c < 128; ++c) {
    std::string text(1, static_cast<char>(c));
    text += 'x';
    const Json value(text);
    EXPECT_EQ(canonical_json(value), value.dump()) << "character " << c;
  }
  const Json object = {{"k\"ey", {"v\n", 1, 2.5}}};
  EXPECT_EQ(canonical_json(object), object.dump());
}

}  // namespace
}  // namespace ks
