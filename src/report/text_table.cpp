#include "report/text_table.h"

#include <algorithm>

#include <fmt/format.h>

#include "report/report_format.h"

namespace ks {

std::string aligned_text_table(const std::vector<std::vector<std::string>>& rows,
                               const std::vector<bool>& right_aligned) {
  std::vector<std::size_t> widths(rows.empty() ? 0 : rows.front().size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  std::string text;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      line += right_aligned[c] ? fmt::format("{:>{}}", row[c], widths[c]) : fmt::format("{:<{}}", row[c], widths[c]);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    text += line + "\n";
  }
  return text;
}

std::string markdown_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                           const std::vector<bool>& right_aligned) {
  std::string text = fmt::format("| {} |\n|", fmt::join(header, " | "));
  for (std::size_t c = 0; c < header.size(); ++c) text += right_aligned[c] ? " ---: |" : " --- |";
  text += "\n";
  for (const auto& row : rows) {
    text += "|";
    for (const std::string& cell : row) text += fmt::format(" {} |", report_page::pipes_escaped(cell));
    text += "\n";
  }
  return text;
}

void append_csv_field(const std::string& text, std::string& out) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) {
    out += text;
    return;
  }
  static constexpr report_page::Replacements kDoubledQuotes{{'"', "\"\""}};
  out += '"' + kDoubledQuotes(text) + '"';
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (c > 0) line += ',';
    append_csv_field(cells[c], line);
  }
  return line + "\r\n";
}

}  // namespace ks
