#include "report/liger_values.h"

#include <charconv>
#include <cmath>

namespace ks {

std::optional<double> parse_double(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

nlohmann::json parse_x_value(const std::string& text) {
  std::int64_t integer = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), integer);
  if (error == std::errc() && end == text.data() + text.size() && !text.empty()) return integer;
  if (const auto number = parse_double(text); number && std::isfinite(*number)) return *number;
  return text;
}

std::string python_literal_as_json(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\'' || c == '"') {
      out += '"';
      for (++i; i < text.size() && text[i] != c; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) {
          if (text[i + 1] != '\'') out += '\\';
          out += text[++i];
        } else if (text[i] == '"') {
          out += "\\\"";
        } else {
          out += text[i];
        }
      }
      out += '"';
      ++i;
      continue;
    }
    const bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    if (!letter) {
      out += c;
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && ((text[end] >= 'A' && text[end] <= 'Z') || (text[end] >= 'a' && text[end] <= 'z')))
      ++end;
    const std::string_view word = text.substr(i, end - i);
    out += word == "True" ? "true" : word == "False" ? "false" : word == "None" ? "null" : std::string(word);
    i = end;
  }
  return out;
}

}  // namespace ks
