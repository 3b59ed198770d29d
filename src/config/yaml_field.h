#pragma once
// Reading YAML nodes so that every problem becomes a SweepFileError naming the file, line, column
// and dotted key of the node at fault, with "did you mean" for a name the sweep file gets wrong (keys,
// parameters, kernels, implementations, modes). Internal to src/config.
#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/sweep_spec.h"

namespace ks::config {

// What a scalar is, by YAML's core schema. A quoted scalar is always a string, so "1024" is not 1024.
enum class ScalarKind { null, boolean, integer, number, string };

struct Scalar {
  ScalarKind kind = ScalarKind::null;
  std::string text;  // as written (without quotes)
  bool boolean = false;
  std::int64_t integer = 0;
  double number = 0;  // set for integers too
};

// " (did you mean 'X'?)" for a near miss, else " (expected one of: a, b, c)"; empty without candidates.
std::string name_hint(const std::string& word, const std::vector<std::string>& candidates);

// "unknown NOUN 'word'[ of OWNER] HINT", the message of every unknown-name error.
std::string unknown_name(const std::string& noun, const std::string& word, const std::vector<std::string>& candidates,
                         const std::string& owner = "");

// "the integer 1024", "the string \"1024\"", "null": how error messages name a value.
std::string describe(const Scalar& scalar);

// A node and the dotted key that errors about it carry (kernels[0].grid.M).
class Field {
 public:
  Field(const std::string& file, YAML::Node node, std::string key, YAML::Mark mark);

  const YAML::Node& node() const { return node_; }
  const std::string& key() const { return key_; }
  const YAML::Mark& mark() const { return mark_; }
  SourceLocation where() const;
  [[noreturn]] void fail(const std::string& problem) const;

  bool is_map() const { return node_.IsMap(); }
  bool is_list() const { return node_.IsSequence(); }
  bool is_null() const { return node_.IsNull(); }

  // Each throws SweepFileError when the node is not of that kind.
  Scalar scalar() const;
  std::string string() const;
  std::int64_t integer() const;
  double number() const;  // an integer or a number, finite
  bool boolean() const;
  // The elements of a list, keyed key[i]. An empty list is an error.
  std::vector<Field> elements() const;

  Field child(YAML::Node node, std::string key, YAML::Mark mark) const;

 private:
  const std::string* file_;
  YAML::Node node_;
  std::string key_;
  YAML::Mark mark_;
};

// One key of a map: the key's own node (for errors about the name) and its value.
struct MapEntry {
  std::string name;
  Field key;
  Field value;
};

// The entries of a map with string keys, each at most once, every one among `known`; an unknown
// key is an error naming the nearest known one. `noun` and `owner` word that error: "unknown
// parameter 'Q' of gemm".
class MapFields {
 public:
  MapFields(const Field& map, const std::vector<std::string>& known, const std::string& noun = "key",
            const std::string& owner = "");

  const std::vector<MapEntry>& entries() const { return entries_; }
  const MapEntry* find(const std::string& name) const;
  // The entry, or an error "missing required key" at the map.
  const MapEntry& require(const std::string& name) const;
  bool empty() const { return entries_.empty(); }

 private:
  Field map_;
  std::vector<MapEntry> entries_;
};

}  // namespace ks::config
