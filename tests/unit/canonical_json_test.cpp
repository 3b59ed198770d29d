// Canonical JSON strings: RFC 8785 escaping, and the same text nlohmann writes for valid UTF-8; JSON
// text written without a JSON value, as nlohmann writes it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/canonical_json.h"
#include "common/json_text.h"

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

// The run documents are written as text (common/json_text.h), and must read exactly as
// nlohmann::json's compact dump() of the same value.
namespace {

std::string dumped(const ks::Json& value) { return value.dump(-1, ' ', false, ks::Json::error_handler_t::replace); }

TEST(JsonText, StringsAreWrittenAsDumpWritesThem) {
  for (const std::string& text : std::vector<std::string>{
           "", "plain text", "quote \" and backslash \\", "tab\tnewline\ncarriage\rnul", std::string("nul\0byte", 8),
           "del \x7f", "UTF-8 · µs → 14.65 ms", "not UTF-8 \xff\xfe end", "lone continuation \x80"})
    EXPECT_EQ(ks::json_string(text), dumped(ks::Json(text))) << text;
}

TEST(JsonText, NumbersAreWrittenAsDumpWritesThem) {
  for (double value :
       {0.0, -0.0, 1757.0, 0.1, 699.75, 1.5e-7, 1e21, 14654463.7, 1e300, std::nan(""), HUGE_VAL, -HUGE_VAL})
    EXPECT_EQ(ks::json_number(value), dumped(ks::Json(value))) << value;
  EXPECT_EQ(ks::json_number(std::int64_t{-9223372036854775807LL}),
            dumped(ks::Json(std::int64_t{-9223372036854775807LL})));
  EXPECT_EQ(ks::json_number(std::uint64_t{18446744073709551615ULL}),
            dumped(ks::Json(std::uint64_t{18446744073709551615ULL})));
  EXPECT_EQ(ks::json_number(std::int32_t{-100}), "-100");
  EXPECT_EQ(ks::json_number(true), "true");
  EXPECT_EQ(ks::json_number(false), "false");
}

TEST(JsonText, ObjectMembersComeInKeyOrderAndAKeyAddedTwiceKeepsItsLastValue) {
  ks::JsonObjectText object;
  object.add_string("status", "passed").add_number("rank", 1).add_string("Zeta", "upper case sorts first");
  object.add("metrics", ks::JsonObjectText().add_number("n_repeat", 7).add_number("median_ns", 14654463.7).text());
  object.add("measurements", ks::json_array({"1", "\"two\"", "{}"}))
      .add_number("rank", 2)
      .add("empty", ks::JsonObjectText().text());
  const ks::Json expected = {{"status", "passed"},
                             {"rank", 2},
                             {"Zeta", "upper case sorts first"},
                             {"metrics", {{"n_repeat", 7}, {"median_ns", 14654463.7}}},
                             {"measurements", {1, "two", ks::Json::object()}},
                             {"empty", ks::Json::object()}};
  EXPECT_EQ(object.text(), dumped(expected));
  EXPECT_EQ(ks::json_array({}), "[]");
}

}  // namespace
