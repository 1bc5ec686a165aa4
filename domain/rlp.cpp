#include "domain/rlp.hpp"

namespace mg::domain::rlp {

namespace {

/// The prefix of a payload of `length` bytes: `short_base` + length up to 55
/// bytes; beyond, `short_base` + 55 + the byte count of the big-endian length,
/// then that length.
std::string prefix(size_t length, unsigned char short_base) {
  if (length <= 55)
    return std::string(1, static_cast<char>(short_base + length));
  std::string length_bytes = uint256(static_cast<std::uint64_t>(length)).to_big_endian();
  return static_cast<char>(short_base + 55 + length_bytes.size()) + length_bytes;
}

} // namespace

std::string encode_bytes(std::string_view bytes) {
  if (bytes.size() == 1 && static_cast<unsigned char>(bytes[0]) < 0x80)
    return std::string(bytes);
  return prefix(bytes.size(), 0x80) + std::string(bytes);
}

std::string encode_uint(const uint256& value) {
  return encode_bytes(value.to_big_endian());
}

std::string encode_list(const std::vector<std::string>& encoded_items) {
  std::string payload;
  for (const auto& item : encoded_items)
    payload += item;
  return prefix(payload.size(), 0xc0) + payload;
}

} // namespace mg::domain::rlp
