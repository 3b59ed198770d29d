#pragma once
// Rows of cells as compare and history print them: aligned text for a terminal or a log, and a
// markdown table for a CI summary or a pull request.
#include <string>
#include <vector>

namespace ks {

// The rows (the first is the header) in columns two spaces apart, each as wide as its widest cell,
// right-aligned where `right_aligned` says; no trailing spaces; every line ends in a newline.
std::string aligned_text_table(const std::vector<std::vector<std::string>>& rows,
                               const std::vector<bool>& right_aligned);

// A markdown table: the header, its rule (`---:` for a right-aligned column), then one line a row,
// the cells' pipes escaped.
std::string markdown_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                           const std::vector<bool>& right_aligned);

// RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled.
void append_csv_field(const std::string& text, std::string& out);
// The cells as one CSV record, ending in CRLF.
std::string csv_line(const std::vector<std::string>& cells);

}  // namespace ks
