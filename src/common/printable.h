#pragma once
// Text from a user's file, argument or kernel on one terminal line: every control character (a
// newline in a path, an escape sequence in a value) is shown as \xNN, never sent to the terminal.
// Messages pass through it where they are printed.
#include <cstddef>
#include <string>
#include <string_view>

namespace ks {

std::string printable(std::string_view text);

// The first line of `text`, cut to `width` bytes (at least 4) with "..." where longer, never inside a
// UTF-8 character: a message in a table's column.
std::string first_line_cut(const std::string& text, std::size_t width);

}  // namespace ks
