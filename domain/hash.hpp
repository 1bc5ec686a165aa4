#pragma once
// Digests used across the project (graph_hash, payload hashes, signatures).
#include <string>
#include <string_view>

namespace mg::domain {

/// Lower-case hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

/// Lower-case hex HMAC-SHA256 of `data` under `key`.
std::string hmac_sha256_hex(std::string_view key, std::string_view data);

} // namespace mg::domain
