#pragma once
// --where EXPR of show, report and compare (which points of the current view to keep) and of plan
// and run (which points of the plan to measure).
//
//   EXPR  := TERM { (',' | 'and') TERM }          every term must hold
//   TERM  := KEY OP VALUE { '|' VALUE }           with '|', any of the values
//   OP    := '=' | '!=' | '<' | '<=' | '>' | '>='
//   KEY   := kernel | implementation | mode | status | file | point | a parameter's name
//
// Numbers compare as numbers (a parameter holding 1024 equals "1024" and "1.024e3"), anything else
// as text; `point` matches a prefix of the point id. A point without the parameter a term names does
// not match it (so `M>=1024` keeps only gemm's points). `<`, `<=`, `>` and `>=` need numbers.
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "view/view.h"

namespace ks {

// A --where expression that cannot be read; what() is one line that quotes the part at fault.
struct FilterError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The text --where compares for a parameter: a string as it is, anything else as JSON; nothing when
// `params` has no such parameter.
std::optional<std::string> parameter_text(const nlohmann::json& params, const std::string& name);

class RowFilter {
 public:
  // The filter that keeps every row (an empty expression).
  RowFilter() = default;
  // Throws FilterError.
  static RowFilter parse(const std::string& expression);

  bool matches(const ViewRow& row) const;
  // The same for anything with keys: `value_of(key)` is the text a key names, or nothing.
  bool matches(const std::function<std::optional<std::string>(const std::string& key)>& value_of) const;
  // The keys the terms name, in order.
  std::vector<std::string> keys() const;
  // The rows that match, in their order.
  std::vector<ViewRow> apply(std::vector<ViewRow> rows) const;

 private:
  enum class Op { eq, ne, lt, le, gt, ge };
  struct Term {
    std::string key;
    Op op = Op::eq;
    std::vector<std::string> values;
  };
  static bool holds(const Term& term, const std::optional<std::string>& value);
  std::vector<Term> terms_;
};

}  // namespace ks
