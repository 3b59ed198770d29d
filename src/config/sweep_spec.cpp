#include "config/sweep_spec.h"

#include <fmt/format.h>

namespace ks {

namespace {

// The message is one line on a terminal: a control character from the file (a newline in a key, an
// escape sequence in a value) is shown as \xNN, never sent to the terminal.
std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) out += fmt::format("\\x{:02x}", byte);
    else out += c;
  }
  return out;
}

}  // namespace

SweepFileError::SweepFileError(SourceLocation where, std::string key, std::string problem)
    : std::runtime_error(printable(fmt::format("{}:{}:{}: {}: {}", where.file, where.line, where.column, key, problem))),
      where_(std::move(where)),
      key_(std::move(key)),
      problem_(std::move(problem)) {}

}  // namespace ks
