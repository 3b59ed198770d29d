#pragma once
// "did you mean" for names a sweep file gets wrong: keys, parameters, kernels, implementations, modes.
#include <optional>
#include <string>
#include <vector>

namespace ks::config {

// The candidate closest to `word` by edit distance (ignoring case), if it is close enough to be a
// plausible typo: at most a third of the candidate's length, and at least one character kept.
std::optional<std::string> nearest_name(const std::string& word, const std::vector<std::string>& candidates);

// " (did you mean 'X'?)" for a near miss, else " (expected one of: a, b, c)"; empty without candidates.
std::string name_hint(const std::string& word, const std::vector<std::string>& candidates);

// "unknown NOUN 'word'[ of OWNER] HINT", the message of every unknown-name error.
std::string unknown_name(const std::string& noun, const std::string& word, const std::vector<std::string>& candidates,
                         const std::string& owner = "");

}  // namespace ks::config
