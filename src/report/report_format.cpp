#include "report/report_format.h"

#include <cmath>

#include <fmt/format.h>

namespace ks::report_page {

namespace {
constexpr const char* kMissing = "—";
}

std::string figure(double value) {
  if (!std::isfinite(value)) return kMissing;
  const double magnitude = std::fabs(value);
  // Plain notation over the range figures live in; 4 significant digits either way.
  if (magnitude >= 1e-4 && magnitude < 1e7) {
    const int digits_before_point = magnitude >= 1 ? static_cast<int>(std::floor(std::log10(magnitude))) + 1 : 0;
    const int decimals =
        magnitude >= 1 ? std::max(0, 4 - digits_before_point) : 3 - static_cast<int>(std::floor(std::log10(magnitude)));
    return fmt::format("{:.{}f}", value, decimals);
  }
  if (magnitude == 0) return "0";
  return fmt::format("{:.3e}", value);
}

std::string ms(double ns) { return figure(ns / 1e6); }

std::string ms_range(double low_ns, double high_ns) {
  if (!std::isfinite(low_ns) || !std::isfinite(high_ns)) return kMissing;
  return ms(low_ns) + "–" + ms(high_ns);
}

std::string memory(std::uint64_t bytes) {
  if (bytes == 0) return kMissing;
  constexpr double kib = 1024.0, mib = kib * 1024, gib = mib * 1024;
  const double b = static_cast<double>(bytes);
  if (b >= gib) return fmt::format("{:.2f} GiB", b / gib);
  if (b >= mib) return fmt::format("{:.1f} MiB", b / mib);
  if (b >= kib) return fmt::format("{:.1f} KiB", b / kib);
  return fmt::format("{} B", bytes);
}

std::string ratio(double value) {
  if (!std::isfinite(value)) return kMissing;
  return figure(value) + "×";
}

std::string parameter_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "";
  return value.dump();
}

std::string Replacements::operator()(std::string_view text) const {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const std::string_view replacement = of_[static_cast<unsigned char>(c)];
    if (replacement.empty()) out += c;
    else out += replacement;
  }
  return out;
}

std::string html_escape(std::string_view text) {
  static constexpr Replacements kEntities{
      {'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}, {'\'', "&#39;"}};
  return kEntities(text);
}

std::string markdown_cell(std::string_view text) {
  static constexpr Replacements kCell{{'|', "\\|"}, {'\n', " "}, {'\r', " "}};
  return kCell(text);
}

std::string pipes_escaped(std::string_view text) {
  static constexpr Replacements kPipes{{'|', "\\|"}};
  return kPipes(text);
}

std::string slug(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    out += keep ? c : '-';
  }
  return out.empty() ? "-" : out;
}

}  // namespace ks::report_page
