#include "common/canonical_json.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace ks {
namespace {

// The shortest decimal digits that round-trip, and the exponent n such that value = 0.d1d2... × 10^n
// (the notation of ECMA-262 Number::toString).
struct ShortestDigits {
  std::string digits;
  int point_position = 0;
};

ShortestDigits shortest_digits(double magnitude) {
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, magnitude, std::chars_format::scientific);
  if (error != std::errc{}) throw std::runtime_error("canonical_json: cannot format a number");
  std::string text(buffer, end);  // "d.ddde+XX" or "de+XX"
  const auto e = text.find('e');
  ShortestDigits out;
  for (std::size_t i = 0; i < e; ++i)
    if (text[i] != '.') out.digits += text[i];
  while (out.digits.size() > 1 && out.digits.back() == '0') out.digits.pop_back();
  out.point_position = std::atoi(text.c_str() + e + 1) + 1;
  return out;
}

// RFC 8785 string escaping: '"' and '\\' escaped, control characters as \b \f \n \r \t or \u00xx
// (lowercase hex), everything else (UTF-8 included) as is. Written directly: this runs for every key
// and string of every digest.
void write_string(std::string& out, const std::string& s) {
  static constexpr char hex[] = "0123456789abcdef";
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out += hex[(c >> 4) & 0xf];
          out += hex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void write(std::string& out, const Json& value) {
  switch (value.type()) {
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      // nlohmann's default object is a std::map: keys are already in byte order, which for UTF-8
      // equals code-point order (RFC 8785 sorts by UTF-16 units; they differ only outside the BMP).
      for (const auto& [key, item] : value.items()) {
        if (!first) out += ',';
        first = false;
        write_string(out, key);
        out += ':';
        write(out, item);
      }
      out += '}';
      break;
    }
    case Json::value_t::array: {
      out += '[';
      for (std::size_t i = 0; i < value.size(); ++i) {
        if (i) out += ',';
        write(out, value[i]);
      }
      out += ']';
      break;
    }
    case Json::value_t::string: write_string(out, value.get_ref<const std::string&>()); break;
    case Json::value_t::boolean: out += value.get<bool>() ? "true" : "false"; break;
    case Json::value_t::null: out += "null"; break;
    case Json::value_t::number_integer: out += std::to_string(value.get<std::int64_t>()); break;
    case Json::value_t::number_unsigned: out += std::to_string(value.get<std::uint64_t>()); break;
    case Json::value_t::number_float: out += ecmascript_number(value.get<double>()); break;
    default: throw std::runtime_error("canonical_json: unsupported JSON value");
  }
}

}  // namespace

std::string ecmascript_number(double value) {
  if (std::isnan(value) || std::isinf(value))
    throw std::runtime_error("canonical_json: NaN and infinity have no JSON form");
  if (value == 0) return "0";
  const ShortestDigits s = shortest_digits(std::fabs(value));
  const int k = static_cast<int>(s.digits.size());
  const int n = s.point_position;
  const std::string_view digits = s.digits;
  std::string out = value < 0 ? "-" : "";
  if (k <= n && n <= 21) {
    out.append(digits).append(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits.substr(0, n)).append(".").append(digits.substr(n));
  } else if (-6 < n && n <= 0) {
    out.append("0.").append(static_cast<std::size_t>(-n), '0').append(digits);
  } else {
    const int exponent = n - 1;
    out.append(digits.substr(0, 1));
    if (k > 1) out.append(".").append(digits.substr(1));
    out.append(exponent < 0 ? "e-" : "e+").append(std::to_string(std::abs(exponent)));
  }
  return out;
}

std::string canonical_json(const Json& value) {
  std::string out;
  write(out, value);
  return out;
}

void append_canonical_json(std::string& out, const Json& value) { write(out, value); }

void append_canonical_string(std::string& out, const std::string& text) { write_string(out, text); }

}  // namespace ks
