#pragma once
// Values as Liger-Kernel's benchmark CSV writes them: numbers, an x_value that is an int, a float or
// a string, and extra_benchmark_config as Python's repr of a dict.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ks {

// The whole text as a number; none where any of it is not one.
std::optional<double> parse_double(std::string_view text);

// x_value as Liger wrote it: an int, a float, or (rarely) a string.
nlohmann::json parse_x_value(const std::string& text);

// Python's repr of a dict as JSON text: quoted strings double-quoted, True/False/None as JSON's.
std::string python_literal_as_json(std::string_view text);

}  // namespace ks
