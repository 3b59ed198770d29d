#pragma once
// Canonical JSON (RFC 8785 style): object keys sorted by code point, no whitespace, numbers written
// as ECMAScript's Number.prototype.toString writes them. Identity in kernelsweep is content: point
// ids and every document digest are SHA-256 of this text, so it must never change between runs,
// machines or library versions.
#include <string>

#include <nlohmann/json.hpp>

namespace ks {

using Json = nlohmann::json;

// The canonical text of a JSON value.
std::string canonical_json(const Json& value);
// The same appended to `out`; and a string's, without making a JSON value of it.
void append_canonical_json(std::string& out, const Json& value);
void append_canonical_string(std::string& out, const std::string& text);

// A double written as ECMAScript writes it (shortest round-trip digits; 1e21 and up, and below 1e-6,
// in exponent form such as "1e+21" or "1.5e-7"). Integers stored as doubles print without ".0".
std::string ecmascript_number(double value);

}  // namespace ks
