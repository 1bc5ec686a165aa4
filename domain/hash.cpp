#include "domain/hash.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdexcept>

namespace mg::domain {

namespace {

std::string to_hex(const unsigned char* bytes, unsigned int len) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 0xf];
  }
  return out;
}

} // namespace

std::string sha256_hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("EVP_Digest(sha256) failed");
  return to_hex(md, len);
}

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(data.data()), data.size(), md, &len))
    throw std::runtime_error("HMAC(sha256) failed");
  return to_hex(md, len);
}

} // namespace mg::domain
