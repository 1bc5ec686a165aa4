#pragma once
// Recursive Length Prefix encoding (Ethereum yellow paper, appendix B): the
// serialisation transactions are signed and broadcast in. Canonical form
// only: geth rejects non-canonical RLP (integers with leading zeros, single
// bytes < 0x80 wrapped in a prefix) even where ganache accepts it.
#include <string>
#include <string_view>
#include <vector>

#include "domain/uint256.hpp"

namespace mg::domain::rlp {

/// A byte string: a single byte < 0x80 is its own encoding; otherwise a
/// length prefix (0x80 + len up to 55 bytes, else 0xb7 + length-of-length).
std::string encode_bytes(std::string_view bytes);

/// An integer: its big-endian bytes without leading zeros, so 0 → 0x80.
std::string encode_uint(const uint256& value);

/// A list of already-encoded items: their concatenation behind a prefix
/// (0xc0 + len up to 55 bytes, else 0xf7 + length-of-length).
std::string encode_list(const std::vector<std::string>& encoded_items);

} // namespace mg::domain::rlp
