#pragma once
// How `kernelsweep report` writes figures and text: times in ms, rates, memory, parameter values,
// and the escaping its HTML and markdown need.
#include <cstdint>
#include <string>
#include <string_view>

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

std::string html_escape(std::string_view text);
// A markdown table cell: one line, its pipes escaped.
std::string markdown_cell(std::string_view text);
// A name safe in a file name and an HTML id: letters, digits, '-' and '_' kept, the rest '-'.
std::string slug(std::string_view text);

}  // namespace ks::report_page
