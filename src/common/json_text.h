#pragma once
// JSON text written as nlohmann::json's compact dump() writes it (members in key order, no spaces,
// its number forms, bytes that are not UTF-8 replaced), without building a JSON value first: the
// document of every run is written this way, where a tree of maps built and freed per run took most
// of rank 0's time in a large sweep.
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace ks {

// A string value: "text" with JSON's escapes.
std::string json_string(std::string_view text);
// A number as dump() writes it (a double that is not finite as null, one that is whole with ".0").
std::string json_number(double value);
std::string json_number(std::int64_t value);
std::string json_number(std::uint64_t value);
std::string json_number(bool value);
template <typename T>
requires std::is_integral_v<T> &&(!std::is_same_v<T, bool>)std::string json_number(T value) {
  if constexpr (std::is_signed_v<T>) return json_number(static_cast<std::int64_t>(value));
  else return json_number(static_cast<std::uint64_t>(value));
}
// Any JSON value, as dump() writes it compactly (what the members of a value given as a tree take).
std::string json_text(const nlohmann::json& value);

// An object's members, added in any order; text() writes them in key order. A key added twice keeps
// its last value, as assigning to a JSON object's member does. Keys are viewed, not copied: each must
// outlive the text() that writes it (string literals, field names, the keys of a JSON value held).
class JsonObjectText {
 public:
  JsonObjectText& add(std::string_view key, std::string value_text);
  JsonObjectText& add_string(std::string_view key, std::string_view value) { return add(key, json_string(value)); }
  template <typename T> JsonObjectText& add_number(std::string_view key, T value) {
    return add(key, json_number(value));
  }
  // Sorts the members added so far; more may be added after.
  std::string text();

 private:
  struct Member {
    std::string_view key;
    std::string value;  // its text
    std::size_t order;  // when it was added: of two with one key, the later wins
  };
  std::vector<Member> members_;
};

// An array of values given as text.
std::string json_array(const std::vector<std::string>& value_texts);

}  // namespace ks
