#include "store/run_labels.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/canonical_json.h"

namespace ks {

namespace {

// The labels kernelsweep writes into every run document itself.
constexpr std::string_view kOwnLabels[] = {"kernelsweep_version", "kernelsweep_commit"};

bool has_control_character(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
}

}  // namespace

std::pair<std::string, std::string> parse_label(std::string_view text) {
  static const std::regex key_pattern(R"([A-Za-z0-9_][A-Za-z0-9_.-]*)");
  const auto equals = text.find('=');
  if (equals == std::string_view::npos) throw LabelError(fmt::format("--label '{}' is not KEY=VALUE", text));
  const std::string key(text.substr(0, equals)), value(text.substr(equals + 1));
  if (!std::regex_match(key, key_pattern))
    throw LabelError(fmt::format(
        "--label '{}': the key must be letters, digits, '_', '.' and '-', not starting with '.' or '-'", text));
  if (value.empty()) throw LabelError(fmt::format("--label '{}' has an empty value", text));
  if (has_control_character(value)) throw LabelError(fmt::format("--label '{}': the value must be one line", key));
  if (std::find(std::begin(kOwnLabels), std::end(kOwnLabels), key) != std::end(kOwnLabels))
    throw LabelError(fmt::format("--label '{}': {} is a label kernelsweep writes itself", text, key));
  return {key, value};
}

RunLabels parse_labels(const std::vector<std::string>& texts) {
  RunLabels labels;
  for (const std::string& text : texts) {
    auto [key, value] = parse_label(text);
    if (labels.contains(key)) throw LabelError(fmt::format("--label {} is given twice", key));
    labels.emplace(std::move(key), std::move(value));
  }
  return labels;
}

std::string labels_text(const RunLabels& labels) {
  std::string text;
  for (const auto& [key, value] : labels) text += fmt::format("{}{}={}", text.empty() ? "" : " ", key, value);
  return text;
}

std::string labels_json(const RunLabels& labels) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [key, value] : labels) object[key] = value;
  return canonical_json(object);
}

RunLabels labels_from_json(std::string_view text) {
  const nlohmann::json object = nlohmann::json::parse(text, nullptr, false);
  if (!object.is_object()) throw std::invalid_argument("labels are not a JSON object");
  RunLabels labels;
  for (const auto& [key, value] : object.items()) {
    if (!value.is_string()) throw std::invalid_argument(fmt::format("label {} is not a string", key));
    labels.emplace(key, value.get<std::string>());
  }
  return labels;
}

RunLabels shared_labels(const std::vector<RunLabels>& sets) {
  if (sets.empty()) return {};
  RunLabels shared = sets.front();
  for (const RunLabels& labels : sets)
    std::erase_if(shared, [&](const auto& entry) {
      const auto found = labels.find(entry.first);
      return found == labels.end() || found->second != entry.second;
    });
  return shared;
}

}  // namespace ks
