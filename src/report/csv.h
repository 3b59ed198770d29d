#pragma once
// Comma-separated values as RFC 4180 defines them: records end in CRLF or LF, fields are separated
// by commas, a field in double quotes may hold commas, line breaks and quotes (written twice). The
// first record is the header. Imports read other tools' files with it (report/import.h).
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ks {

// A text that is not CSV; what() says what is wrong, line() where (1-based, the physical line).
class CsvError : public std::runtime_error {
 public:
  CsvError(std::size_t line, const std::string& what) : std::runtime_error(what), line_(line) {}
  std::size_t line() const { return line_; }

 private:
  std::size_t line_;
};

struct CsvRecord {
  std::size_t line = 0;  // the physical line the record starts on (a quoted line break spans two)
  std::vector<std::string> fields;
};

struct CsvTable {
  std::vector<std::string> header;
  std::vector<CsvRecord> rows;  // every record after the header, as many fields as it has
  // The index of the column named `name`, if the header has one.
  std::optional<std::size_t> column(std::string_view name) const;
};

// Parses the whole text. A UTF-8 byte order mark before the header is skipped, empty lines are
// ignored. Throws CsvError for a quote left open, text between a closing quote and the next comma, or
// a quote inside an unquoted field. A record's field count is the reader's to check: only it can
// name the columns a short record lacks.
CsvTable parse_csv(std::string_view text);

}  // namespace ks
