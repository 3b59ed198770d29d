#include "common/digest.h"

#include <openssl/evp.h>

#include <array>
#include <stdexcept>

namespace ks {

namespace {

// OpenSSL 3 looks EVP_sha256() up in its provider tables at every call; fetching it once makes a
// digest of a small document several times cheaper (every run's workload digest goes through here).
const EVP_MD* sha256_method() {
  static EVP_MD* const method = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  if (!method) throw std::runtime_error("sha256: OpenSSL has no SHA256 (EVP_MD_fetch failed)");
  return method;
}

}  // namespace

// One context per thread, started over after each digest: EVP_Digest makes and frees a context at
// every call, a third of the time a plan walk spends digesting its points.
std::array<unsigned char, 32> sha256_bytes(std::string_view bytes) {
  thread_local Sha256 digest;
  digest.update(bytes);
  return digest.finish();
}

std::string sha256_hex(std::string_view bytes) { return hex_of(sha256_bytes(bytes)); }

std::string hex_of(std::span<const unsigned char> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(2 * bytes.size(), '0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  return out;
}

Sha256::Sha256() : context_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
  if (!context_ || EVP_DigestInit_ex(context_.get(), sha256_method(), nullptr) != 1)
    throw std::runtime_error("sha256: OpenSSL could not start a digest");
}

void Sha256::update(std::string_view bytes) {
  if (EVP_DigestUpdate(context_.get(), bytes.data(), bytes.size()) != 1)
    throw std::runtime_error("sha256: EVP_DigestUpdate failed");
}

std::array<unsigned char, 32> Sha256::finish() {
  std::array<unsigned char, 32> digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context_.get(), digest.data(), &length) != 1 || length != digest.size() ||
      EVP_DigestInit_ex(context_.get(), sha256_method(), nullptr) != 1)
    throw std::runtime_error("sha256: EVP_DigestFinal_ex failed");
  return digest;
}

std::string content_digest(const Json& value) { return "sha256:" + sha256_hex(canonical_json(value)); }

}  // namespace ks
