#include "config/yaml_field.h"

#include <charconv>
#include <cmath>
#include <regex>

#include <fmt/format.h>

#include "config/suggest.h"

namespace ks::config {
namespace {

bool is_plain(const YAML::Node& node) { return node.Tag() == "?"; }

bool matches(const std::string& text, const std::regex& pattern) { return std::regex_match(text, pattern); }

// The YAML 1.2 core schema's plain scalars, minus the forms nobody writes in a sweep file (0x, 0o,
// .inf, .nan): those stay strings, so a typo is never silently a number. Integers may end in a
// binary size suffix, K, M, G or T (1024, 1024², ...), as nccl-tests reads its sizes: 8G.
ScalarKind plain_kind(const std::string& text) {
  static const std::regex null_form("|~|null|Null|NULL");
  static const std::regex bool_form("true|True|TRUE|false|False|FALSE");
  static const std::regex integer_form("[-+]?[0-9]+[KMGT]?");
  static const std::regex number_form("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (matches(text, null_form)) return ScalarKind::null;
  if (matches(text, bool_form)) return ScalarKind::boolean;
  if (matches(text, integer_form)) return ScalarKind::integer;
  if (matches(text, number_form)) return ScalarKind::number;
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

}  // namespace

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

std::string join_key(const std::string& parent, const std::string& name) {
  return parent.empty() ? name : parent + "." + name;
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

std::string Field::string() const {
  const Scalar value = scalar();
  if (value.kind != ScalarKind::string) fail("expected a string, got " + describe(value));
  return value.text;
}

std::int64_t Field::integer() const {
  const Scalar value = scalar();
  if (value.kind != ScalarKind::integer) fail("expected an integer, got " + describe(value));
  return value.integer;
}

double Field::number() const {
  const Scalar value = scalar();
  if (value.kind != ScalarKind::integer && value.kind != ScalarKind::number)
    fail("expected a number, got " + describe(value));
  return value.number;
}

bool Field::boolean() const {
  const Scalar value = scalar();
  if (value.kind != ScalarKind::boolean) fail("expected a boolean (true or false), got " + describe(value));
  return value.boolean;
}

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
  for (const auto& entry : entries_)
    if (entry.name == name) return &entry;
  return nullptr;
}

const MapEntry& MapFields::require(const std::string& name) const {
  if (const MapEntry* entry = find(name)) return *entry;
  map_.child(map_.node(), join_key(map_.key(), name), map_.mark()).fail("missing required key");
}

}  // namespace ks::config
