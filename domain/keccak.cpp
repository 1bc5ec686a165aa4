#include "domain/keccak.hpp"

#include <cryptopp/keccak.h>

#include "domain/hash.hpp"

namespace mg::domain {

std::string keccak256(std::string_view bytes) {
  CryptoPP::Keccak_256 h;
  std::string digest(CryptoPP::Keccak_256::DIGESTSIZE, '\0');
  h.CalculateDigest(reinterpret_cast<CryptoPP::byte*>(&digest[0]),
                    reinterpret_cast<const CryptoPP::byte*>(bytes.data()), bytes.size());
  return digest;
}

std::string keccak256_hex(std::string_view bytes) {
  std::string digest = keccak256(bytes);
  return to_hex(reinterpret_cast<const unsigned char*>(digest.data()), digest.size());
}

} // namespace mg::domain
