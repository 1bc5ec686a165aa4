#pragma once
// Recursive Length Prefix encoding (Ethereum yellow paper, appendix B): the
// serialisation transactions are signed and broadcast in. Canonical form
// only: geth rejects non-canonical RLP (integers with leading zeros, single
// bytes < 0x80 wrapped in a prefix) even where ganache accepts it.
#include <optional>
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

/// One decoded item: a byte string, or a list whose payload is the
/// concatenated encodings of its items (decode_list again to walk it).
struct item {
  bool is_list = false;
  std::string payload;
};

/// The items of `encoded` when it is exactly one canonical RLP list (no
/// trailing bytes, shortest length prefixes, single bytes < 0x80 not
/// wrapped); nullopt otherwise. Inverse of encode_list.
std::optional<std::vector<item>> decode_list(std::string_view encoded);

/// A canonical integer payload (no leading zero byte, at most 32 bytes) as
/// uint256; nullopt otherwise. Inverse of encode_uint's payload.
std::optional<uint256> decode_uint(const item& it);

} // namespace mg::domain::rlp
