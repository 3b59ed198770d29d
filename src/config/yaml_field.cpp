#include "config/yaml_field.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ks::config {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Levenshtein distance, case-insensitive: "m" is a typo of "M", not a different name.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::size_t allowed_distance(const std::string& candidate) {
  const std::size_t third = std::max<std::size_t>(1, candidate.size() / 3);
  return std::min(third, candidate.empty() ? 0 : candidate.size() - 1);
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) { return lower(a) == lower(b); });
}

// The candidate closest to `word` by edit distance (ignoring case), if it is close enough to be a
// plausible typo: at most a third of the candidate's length, and at least one character kept.
std::optional<std::string> nearest_name(const std::string& word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const auto& candidate : candidates) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance > allowed_distance(candidate)) continue;
    // Between names as near, one the word begins (a name cut short) is the likelier meaning.
    const bool nearer = !best || distance < best_distance ||
                        (distance == best_distance && starts_with(candidate, word) && !starts_with(*best, word));
    if (nearer) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

bool is_plain(const YAML::Node& node) { return node.Tag() == "?"; }

// The YAML 1.2 core schema's plain scalars, minus the forms nobody writes in a sweep file (0x, 0o,
// .inf, .nan): those stay strings, so a typo is never silently a number. Integers may end in a
// binary size suffix, K, M, G or T (1024, 1024², ...), as nccl-tests reads its sizes: 8G.
ScalarKind plain_kind(const std::string& text) {
  static const std::regex null_form("|~|null|Null|NULL");
  static const std::regex bool_form("true|True|TRUE|false|False|FALSE");
  static const std::regex integer_form("[-+]?[0-9]+[KMGT]?");
  static const std::regex number_form("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (std::regex_match(text, null_form)) return ScalarKind::null;
  if (std::regex_match(text, bool_form)) return ScalarKind::boolean;
  if (std::regex_match(text, integer_form)) return ScalarKind::integer;
  if (std::regex_match(text, number_form)) return ScalarKind::number;
  return ScalarKind::string;
}

// from_chars takes no leading '+'.
std::string without_plus(const std::string& text) { return !text.empty() && text[0] == '+' ? text.substr(1) : text; }

// The multiplier of an integer's size suffix (1 without one), and the digits without it.
std::int64_t size_multiplier(std::string& digits) {
  static constexpr std::string_view kSuffixes = "KMGT";
  const std::size_t at = digits.empty() ? std::string_view::npos : kSuffixes.find(digits.back());
  if (at == std::string_view::npos) return 1;
  digits.pop_back();
  return std::int64_t{1} << (10 * (at + 1));
}

const char* node_kind(const YAML::Node& node) {
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  return "a scalar";
}

// The field's scalar, which must be of `kind` (an integer is a number too): else "expected WHAT, got ...".
Scalar scalar_of_kind(const Field& field, ScalarKind kind, const std::string& what) {
  const Scalar value = field.scalar();
  if (value.kind != kind && !(kind == ScalarKind::number && value.kind == ScalarKind::integer))
    field.fail("expected " + what + ", got " + describe(value));
  return value;
}

// Joins a parent key and a child name: "" + "name" = "name", "protocol" + "rep_ms" = "protocol.rep_ms".
std::string join_key(const std::string& parent, const std::string& name) {
  return parent.empty() ? name : parent + "." + name;
}

}  // namespace

std::string name_hint(const std::string& word, const std::vector<std::string>& candidates) {
  if (candidates.empty()) return "";
  if (auto near = nearest_name(word, candidates)) return fmt::format(" (did you mean '{}'?)", *near);
  return fmt::format(" (expected one of: {})", fmt::join(candidates, ", "));
}

std::string unknown_name(const std::string& noun, const std::string& word, const std::vector<std::string>& candidates,
                         const std::string& owner) {
  const std::string of_owner = owner.empty() ? "" : " of " + owner;
  return fmt::format("unknown {} '{}'{}{}", noun, word, of_owner, name_hint(word, candidates));
}

std::string describe(const Scalar& scalar) {
  switch (scalar.kind) {
    case ScalarKind::null: return "no value (null)";
    case ScalarKind::boolean: return "the boolean " + scalar.text;
    case ScalarKind::integer: return "the integer " + scalar.text;
    case ScalarKind::number: return "the number " + scalar.text;
    case ScalarKind::string: return fmt::format("the string \"{}\"", scalar.text);
  }
  return scalar.text;
}

Field::Field(const std::string& file, YAML::Node node, std::string key, YAML::Mark mark)
    : file_(&file), node_(std::move(node)), key_(std::move(key)), mark_(mark) {}

SourceLocation Field::where() const {
  // yaml-cpp counts from 0; a node without a position (an empty document) points at the start.
  if (mark_.is_null()) return {*file_, 1, 1};
  return {*file_, mark_.line + 1, mark_.column + 1};
}

void Field::fail(const std::string& problem) const {
  throw SweepFileError(where(), key_.empty() ? "(document)" : key_, problem);
}

Field Field::child(YAML::Node node, std::string key, YAML::Mark mark) const {
  return Field(*file_, std::move(node), std::move(key), mark);
}

Scalar Field::scalar() const {
  if (!node_.IsScalar() && !node_.IsNull()) fail(fmt::format("expected one value, got {}", node_kind(node_)));
  Scalar out;
  out.text = node_.IsNull() ? "" : node_.Scalar();
  out.kind = node_.IsNull() ? ScalarKind::null : is_plain(node_) ? plain_kind(out.text) : ScalarKind::string;
  std::string digits = without_plus(out.text);
  const std::int64_t multiplier = out.kind == ScalarKind::integer ? size_multiplier(digits) : 1;
  const char* first = digits.data();
  const char* last = digits.data() + digits.size();
  switch (out.kind) {
    case ScalarKind::boolean: out.boolean = out.text[0] == 't' || out.text[0] == 'T'; break;
    case ScalarKind::integer:
      if (std::from_chars(first, last, out.integer).ec != std::errc() ||
          __builtin_mul_overflow(out.integer, multiplier, &out.integer))
        fail("integer " + out.text + " is out of range");
      out.number = static_cast<double>(out.integer);
      break;
    case ScalarKind::number:
      if (std::from_chars(first, last, out.number).ec != std::errc() || !std::isfinite(out.number))
        fail("number " + out.text + " is out of range");
      break;
    default: break;
  }
  return out;
}

std::string Field::string() const { return scalar_of_kind(*this, ScalarKind::string, "a string").text; }

std::int64_t Field::integer() const { return scalar_of_kind(*this, ScalarKind::integer, "an integer").integer; }

double Field::number() const { return scalar_of_kind(*this, ScalarKind::number, "a number").number; }

bool Field::boolean() const { return scalar_of_kind(*this, ScalarKind::boolean, "a boolean (true or false)").boolean; }

std::vector<Field> Field::elements() const {
  if (!node_.IsSequence()) fail(fmt::format("expected a list, got {}", is_null() ? "no value" : node_kind(node_)));
  if (node_.size() == 0) fail("empty list");
  std::vector<Field> out;
  for (std::size_t i = 0; i < node_.size(); ++i) {
    const YAML::Node element = node_[i];
    const YAML::Mark mark = element.Mark().is_null() ? mark_ : element.Mark();
    out.push_back(child(element, fmt::format("{}[{}]", key_, i), mark));
  }
  return out;
}

MapFields::MapFields(const Field& map, const std::vector<std::string>& known, const std::string& noun,
                     const std::string& owner)
    : map_(map) {
  if (!map.is_map())
    map.fail(fmt::format("expected a map, got {}", map.is_null() ? "no value" : node_kind(map.node())));
  for (auto it = map.node().begin(); it != map.node().end(); ++it) {
    const YAML::Node key_node = it->first;  // a copy: `it->` yields a temporary
    const std::string name = key_node.IsScalar() ? key_node.Scalar() : "";
    const Field key = map.child(key_node, join_key(map.key(), name), key_node.Mark());
    if (const Scalar written = key.scalar(); written.kind != ScalarKind::string)
      key.fail("a key must be a name, got " + describe(written));
    if (const MapEntry* earlier = find(name))
      key.fail(fmt::format("given twice (first at line {})", earlier->key.where().line));
    if (std::find(known.begin(), known.end(), name) == known.end()) key.fail(unknown_name(noun, name, known, owner));
    // A missing value's own position is where the next token starts, so errors about it point at its key.
    const YAML::Node value_node = it->second;
    const YAML::Mark value_mark =
        value_node.IsNull() || value_node.Mark().is_null() ? key_node.Mark() : value_node.Mark();
    entries_.push_back({name, key, map.child(value_node, key.key(), value_mark)});
  }
}

const MapEntry* MapFields::find(const std::string& name) const {
  const auto entry = std::ranges::find(entries_, name, &MapEntry::name);
  return entry == entries_.end() ? nullptr : &*entry;
}

const MapEntry& MapFields::require(const std::string& name) const {
  if (const MapEntry* entry = find(name)) return *entry;
  map_.child(map_.node(), join_key(map_.key(), name), map_.mark()).fail("missing required key");
}

}  // namespace ks::config
