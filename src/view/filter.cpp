#include "view/filter.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <ranges>
#include <regex>
#include <string_view>

#include <fmt/format.h>

namespace ks {
namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

std::optional<double> number_of(const std::string& text) {
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The terms of an expression: split at ',' and at the word 'and'.
std::vector<std::string> term_texts(const std::string& expression) {
  static const std::regex separator(R"(\s*,\s*|\s+and\s+)");
  std::vector<std::string> terms;
  for (std::sregex_token_iterator it(expression.begin(), expression.end(), separator, -1), end; it != end; ++it) {
    const std::string term = trimmed(*it);
    if (!term.empty()) terms.push_back(term);
  }
  return terms;
}

// The text a key names in a row, or nothing when the row has no such key.
std::optional<std::string> value_of(const std::string& key, const ViewRow& row) {
  const RunRecord& run = row.run;
  if (key == "kernel") return run.kernel;
  if (key == "implementation") return run.implementation;
  if (key == "mode") return run.mode;
  if (key == "status") return run.status;
  if (key == "file") return row.file;
  if (key == "point") return run.point_id;
  return parameter_text(row.params, key);
}

}  // namespace

std::optional<std::string> parameter_text(const nlohmann::json& params, const std::string& name) {
  const auto it = params.find(name);
  if (it == params.end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

RowFilter RowFilter::parse(const std::string& expression) {
  static const std::regex term_pattern(R"(^([A-Za-z_][A-Za-z0-9_.-]*)\s*(!=|<=|>=|=|<|>)\s*(.+)$)");
  RowFilter filter;
  for (const std::string& text : term_texts(expression)) {
    std::smatch match;
    if (!std::regex_match(text, match, term_pattern))
      throw FilterError(fmt::format("--where: '{}' is not KEY OP VALUE (OP one of = != < <= > >=)", text));
    Term term;
    term.key = match[1];
    const std::string op = match[2];
    static constexpr std::string_view kOps[] = {"=", "!=", "<", "<=", ">", ">="};  // in the order of Op
    term.op = static_cast<Op>(std::find(std::begin(kOps), std::end(kOps), op) - std::begin(kOps));
    const std::string values = match[3];
    for (const auto value : std::views::split(values, '|'))
      term.values.push_back(trimmed({value.begin(), value.end()}));
    const bool ordered = term.op != Op::eq && term.op != Op::ne;
    for (const std::string& value : term.values) {
      if (value.empty()) throw FilterError(fmt::format("--where: '{}' has an empty value", text));
      if (ordered && !number_of(value))
        throw FilterError(fmt::format("--where: '{}': {} compares numbers, and '{}' is not one", text, op, value));
    }
    filter.terms_.push_back(std::move(term));
  }
  return filter;
}

bool RowFilter::holds(const Term& term, const std::optional<std::string>& value) {
  if (!value) return false;
  const std::optional<double> number = number_of(*value);
  const auto compare = [&](const std::string& wanted) {
    const std::optional<double> wanted_number = number_of(wanted);
    const bool numeric = number && wanted_number;
    const bool equal = term.key == "point" ? value->starts_with(wanted)
                       : numeric           ? *number == *wanted_number
                                           : *value == wanted;
    switch (term.op) {
      case Op::eq: return equal;
      case Op::ne: return !equal;
      case Op::lt: return numeric && *number < *wanted_number;
      case Op::le: return numeric && *number <= *wanted_number;
      case Op::gt: return numeric && *number > *wanted_number;
      case Op::ge: return numeric && *number >= *wanted_number;
    }
    return false;
  };
  // != holds when the value differs from every one given; the others when it meets any.
  if (term.op == Op::ne) return std::all_of(term.values.begin(), term.values.end(), compare);
  return std::any_of(term.values.begin(), term.values.end(), compare);
}

bool RowFilter::matches(const ViewRow& row) const {
  return matches([&](const std::string& key) { return value_of(key, row); });
}

bool RowFilter::matches(const std::function<std::optional<std::string>(const std::string& key)>& value_of) const {
  return std::all_of(terms_.begin(), terms_.end(), [&](const Term& term) { return holds(term, value_of(term.key)); });
}

std::vector<std::string> RowFilter::keys() const {
  std::vector<std::string> out;
  for (const Term& term : terms_) out.push_back(term.key);
  return out;
}

std::vector<ViewRow> RowFilter::apply(std::vector<ViewRow> rows) const {
  std::erase_if(rows, [&](const ViewRow& row) { return !matches(row); });
  return rows;
}

}  // namespace ks
