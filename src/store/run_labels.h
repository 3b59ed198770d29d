#pragma once
// The labels of a run: KEY=VALUE pairs a team gives a sweep (`run --label commit=3f2a1c9 --label
// branch=main`, `import --label`), kept in the results file's root attribute `labels` and in every
// run document's metadata.labels, so that a history of nightly runs names each run by its commit,
// branch or driver rather than by its start time (docs/history.md).
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ks {

// Key to value, one value a key, sorted by key.
using RunLabels = std::map<std::string, std::string>;

// A --label that cannot be read; what() is one line that quotes it.
struct LabelError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// One --label: KEY=VALUE, KEY of letters, digits, '_', '.' and '-' (not starting with '.' or '-'),
// VALUE not empty and on one line; neither of kernelsweep's own document labels
// (kernelsweep_version, kernelsweep_commit). Throws LabelError.
std::pair<std::string, std::string> parse_label(std::string_view text);
// Every --label, each key once. Throws LabelError.
RunLabels parse_labels(const std::vector<std::string>& texts);

// "branch=main commit=3f2a1c9": the labels as a line of text, in key order.
std::string labels_text(const RunLabels& labels);
// The labels as a JSON object's canonical text (the root attribute); "{}" for none.
std::string labels_json(const RunLabels& labels);
// The root attribute back; throws std::invalid_argument for text that is not an object of strings.
RunLabels labels_from_json(std::string_view text);

// The labels every one of `sets` has with the same value (a merged file keeps those).
RunLabels shared_labels(const std::vector<RunLabels>& sets);

}  // namespace ks
