#include "common/json_text.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace ks {

namespace {

bool plain_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; });
}

// Printable ASCII other than the quote and the backslash is written as it is; anything else (escapes,
// UTF-8, bytes that are not UTF-8) takes nlohmann's serializer, whose text this must match.
void append_json_string(std::string& out, std::string_view text) {
  if (!plain_ascii(text)) {
    out += json_text(nlohmann::json(std::string(text)));
    return;
  }
  out += '"';
  out += text;
  out += '"';
}

}  // namespace

std::string json_string(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  append_json_string(out, text);
  return out;
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  // The shortest text that reads back as the value, in dump()'s layout: what its serializer calls.
  std::array<char, 64> buffer{};
  char* begin = buffer.data();
  char* end = nlohmann::detail::to_chars(begin, begin + buffer.size(), value);
  return std::string(begin, end);
}

std::string json_number(std::int64_t value) { return std::to_string(value); }
std::string json_number(std::uint64_t value) { return std::to_string(value); }
std::string json_number(bool value) { return value ? "true" : "false"; }

std::string json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

JsonObjectText& JsonObjectText::add(std::string_view key, std::string value_text) {
  if (members_.empty()) members_.reserve(16);
  members_.push_back({key, std::move(value_text), members_.size()});
  return *this;
}

std::string JsonObjectText::text() {
  // Keys compare as std::map<std::string> orders them (byte by byte); of equal keys the last added
  // comes last and is the one written.
  std::sort(members_.begin(), members_.end(),
            [](const Member& a, const Member& b) { return a.key != b.key ? a.key < b.key : a.order < b.order; });
  std::size_t size = 2;
  for (const Member& member : members_) size += member.key.size() + member.value.size() + 4;
  std::string out;
  out.reserve(size);
  out += '{';
  bool first = true;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (i + 1 < members_.size() && members_[i + 1].key == members_[i].key) continue;
    if (!first) out += ',';
    first = false;
    append_json_string(out, members_[i].key);
    out += ':';
    out += members_[i].value;
  }
  out += '}';
  return out;
}

std::string json_array(const std::vector<std::string>& value_texts) {
  std::string out = "[";
  for (std::size_t i = 0; i < value_texts.size(); ++i) {
    if (i > 0) out += ',';
    out += value_texts[i];
  }
  out += ']';
  return out;
}

}  // namespace ks
