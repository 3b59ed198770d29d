// The lines of two texts compared (line_diff.h).
#include "store/line_diff.h"

#include <algorithm>
#include <vector>

namespace ks {

namespace {

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string quoted_line(const std::vector<std::string>& lines, std::size_t index) {
  if (index >= lines.size()) return "no line";
  return lines[index].empty() ? "an empty line" : "`" + lines[index] + "`";
}

}  // namespace

std::string describe_sweep_text_change(std::string_view stored, std::string_view given) {
  if (stored == given) return "";
  return describe_first_differing_line(stored, given, "the results file's sweep", "the sweep file") + " (" +
         std::to_string(split_lines(stored).size()) + " lines stored, " + std::to_string(split_lines(given).size()) +
         " given)";
}

std::string describe_first_differing_line(std::string_view first_text, std::string_view second_text,
                                          std::string_view first_label, std::string_view second_label) {
  if (first_text == second_text) return "";
  const std::vector<std::string> first_lines = split_lines(first_text), second_lines = split_lines(second_text);
  std::size_t line = 0;
  while (line < first_lines.size() && line < second_lines.size() && first_lines[line] == second_lines[line]) ++line;
  return "line " + std::to_string(line + 1) + ": " + std::string(first_label) + " has " +
         quoted_line(first_lines, line) + ", " + std::string(second_label) + " has " + quoted_line(second_lines, line);
}

}  // namespace ks
