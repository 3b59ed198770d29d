#include "common/digest.h"

#include <openssl/evp.h>

#include <array>
#include <stdexcept>

namespace ks {

std::string sha256_hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> hash{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), hash.data(), &length, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("sha256: OpenSSL EVP_Digest failed");
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    out += hex[hash[i] >> 4];
    out += hex[hash[i] & 15];
  }
  return out;
}

std::string content_digest(const Json& value) { return "sha256:" + sha256_hex(canonical_json(value)); }

}  // namespace ks
