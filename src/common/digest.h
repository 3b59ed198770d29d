#pragma once
// SHA-256 through OpenSSL's libcrypto.
#include <string>
#include <string_view>

#include "common/canonical_json.h"

namespace ks {

// Lowercase hex SHA-256 of the bytes.
std::string sha256_hex(std::string_view bytes);

// "sha256:" + sha256_hex(canonical_json(value)): the digest rule of every kernelindex document.
std::string content_digest(const Json& value);

}  // namespace ks
