#pragma once
// Keccak-256 as Ethereum uses it: the pre-standard padding, so NOT SHA3-256
// (Keccak-256("") = c5d246…a470, SHA3-256("") = a7ffc6…434a). Backed by
// libcrypto++'s CryptoPP::Keccak_256 (OpenSSL 3.0 has only SHA3).
#include <string>
#include <string_view>

namespace mg::domain {

/// The 32-byte digest.
std::string keccak256(std::string_view bytes);

/// The digest as 64 lower-case hex digits (no 0x).
std::string keccak256_hex(std::string_view bytes);

} // namespace mg::domain
