#include "report/csv.h"

namespace ks {
namespace {

// Reads one record at a time, keeping count of physical lines for error messages.
class CsvReader {
 public:
  explicit CsvReader(std::string_view text) : text_(text) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") at_ = 3;
  }

  // The next record, or nothing at the end of the text. Empty lines are no records.
  std::optional<CsvRecord> next() {
    while (at_ < text_.size() && is_line_end(text_[at_])) skip_line_end();
    if (at_ >= text_.size()) return std::nullopt;
    CsvRecord record;
    record.line = line_;
    for (;;) {
      record.fields.push_back(read_field());
      if (at_ >= text_.size()) break;
      if (text_[at_] == ',') {
        ++at_;
        continue;
      }
      skip_line_end();  // read_field stops only at a comma, a line end or the end
      break;
    }
    return record;
  }

 private:
  static bool is_line_end(char c) { return c == '\n' || c == '\r'; }

  void skip_line_end() {
    if (text_[at_] == '\r' && at_ + 1 < text_.size() && text_[at_ + 1] == '\n') ++at_;
    ++at_;
    ++line_;
  }

  std::string read_field() {
    if (at_ < text_.size() && text_[at_] == '"') return read_quoted_field();
    const std::size_t start = at_;
    while (at_ < text_.size() && text_[at_] != ',' && !is_line_end(text_[at_])) {
      if (text_[at_] == '"')
        throw CsvError(line_,
                       "a double quote inside a field that does not start with one (quote the whole field "
                       "and write the quote twice)");
      ++at_;
    }
    return std::string(text_.substr(start, at_ - start));
  }

  std::string read_quoted_field() {
    const std::size_t opened_on = line_;
    std::string field;
    ++at_;  // the opening quote
    for (;;) {
      if (at_ >= text_.size()) throw CsvError(opened_on, "a quoted field is never closed");
      const char c = text_[at_];
      if (c == '"') {
        if (at_ + 1 < text_.size() && text_[at_ + 1] == '"') {
          field += '"';
          at_ += 2;
          continue;
        }
        ++at_;  // the closing quote
        break;
      }
      if (c == '\n' || (c == '\r' && !(at_ + 1 < text_.size() && text_[at_ + 1] == '\n'))) ++line_;
      field += c;
      ++at_;
    }
    if (at_ < text_.size() && text_[at_] != ',' && !is_line_end(text_[at_]))
      throw CsvError(line_, "text after the closing quote of a field (a field is either quoted whole or not at all)");
    return field;
  }

  std::string_view text_;
  std::size_t at_ = 0;
  std::size_t line_ = 1;
};

}  // namespace

std::optional<std::size_t> CsvTable::column(std::string_view name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  return std::nullopt;
}

CsvTable parse_csv(std::string_view text) {
  CsvReader reader(text);
  CsvTable table;
  auto header = reader.next();
  if (!header) throw CsvError(1, "the file is empty (no header line)");
  table.header = std::move(header->fields);
  while (auto record = reader.next()) table.rows.push_back(std::move(*record));
  return table;
}

}  // namespace ks
