#pragma once
// Text from a user's file, argument or kernel on one terminal line: every control character (a
// newline in a path, an escape sequence in a value) is shown as \xNN, never sent to the terminal.
// Messages pass through it where they are printed.
#include <string>
#include <string_view>

namespace ks {

std::string printable(std::string_view text);

}  // namespace ks
