#include "config/suggest.h"

#include <algorithm>
#include <cctype>

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

}  // namespace

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

}  // namespace ks::config
