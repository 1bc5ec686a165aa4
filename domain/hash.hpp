#pragma once
// Digests used across the project (graph_hash, payload hashes, signatures).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace mg::domain {

/// Lower-case hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

/// Lower-case hex HMAC-SHA256 of `data` under `key`.
std::string hmac_sha256_hex(std::string_view key, std::string_view data);

/// Lower-case hex of `len` bytes.
std::string to_hex(const unsigned char* bytes, size_t len);

/// Lower-case hex of `bytes` bytes from OpenSSL's CSPRNG (nonces, secrets);
/// throws std::runtime_error when it cannot provide them.
std::string random_hex(size_t bytes);

/// Value of one hex digit (either case), or -1.
int hex_digit_value(char c);

/// The bytes of an even-length hex string (either case), or nullopt.
std::optional<std::string> from_hex(std::string_view hex);

} // namespace mg::domain
