#pragma once
// How `kernelsweep report` writes figures and text: times in ms, rates, memory, parameter values,
// and the escaping its HTML and markdown need (show's and compare's markdown too).
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace ks::report_page {

// A figure with 4 significant digits ("4.226", "0.01234", "1234"), or "—" when it is not a finite
// number (not measured).
std::string figure(double value);
// Nanoseconds as milliseconds, 4 significant digits.
std::string ms(double ns);
// "4.201–4.250" (ms), or "—".
std::string ms_range(double low_ns, double high_ns);
// 1.50 GiB, 12.3 MiB, 512 B; "—" for 0 (not measured).
std::string memory(std::uint64_t bytes);
// A speed-up or a fraction: "12.3×", "0.98×"; "—" when not finite.
std::string ratio(double value);

// A parameter's value as a table shows it: 1024, 0.5, fp32, true.
std::string parameter_text(const nlohmann::json& value);

// Text with some characters replaced, each by a text of its own: HTML's entities, a markdown cell's
// escaped pipes, the doubled quotes of gnuplot and CSV. A table of every byte, so that a page of
// 100,000 points is escaped at one lookup a character.
class Replacements {
 public:
  constexpr Replacements(std::initializer_list<std::pair<char, std::string_view>> replacements) {
    for (const auto& [c, replacement] : replacements) of_[static_cast<unsigned char>(c)] = replacement;
  }
  std::string operator()(std::string_view text) const;

 private:
  std::array<std::string_view, 256> of_{};  // empty: the character stays as it is
};

std::string html_escape(std::string_view text);
// A markdown table cell: one line, its pipes escaped.
std::string markdown_cell(std::string_view text);
// A cell of show's or compare's markdown tables: its pipes escaped, its lines as they are.
std::string pipes_escaped(std::string_view text);
// A name safe in a file name and an HTML id: letters, digits, '-' and '_' kept, the rest '-'.
std::string slug(std::string_view text);

}  // namespace ks::report_page
