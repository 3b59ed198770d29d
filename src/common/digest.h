#pragma once
// SHA-256 through OpenSSL's libcrypto.
#include <array>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "common/canonical_json.h"

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

namespace ks {

// Lowercase hex SHA-256 of the bytes.
std::string sha256_hex(std::string_view bytes);
// The same digest as its 32 bytes.
std::array<unsigned char, 32> sha256_bytes(std::string_view bytes);
// Lowercase hex of bytes.
std::string hex_of(std::span<const unsigned char> bytes);

// SHA-256 of bytes given in pieces, without joining them: for digests taken a million times over.
class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  // The digest of everything given; the object starts over.
  std::array<unsigned char, 32> finish();

 private:
  std::unique_ptr<evp_md_ctx_st, void (*)(evp_md_ctx_st*)> context_;
};

// "sha256:" + sha256_hex(canonical_json(value)): the digest rule of every kernelindex document.
std::string content_digest(const Json& value);

}  // namespace ks
