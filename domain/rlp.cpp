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

/// Reads one item at `pos`; advances `pos` past it.
std::optional<item> read_item(std::string_view in, size_t& pos) {
  if (pos >= in.size())
    return std::nullopt;
  const auto first = static_cast<unsigned char>(in[pos]);
  if (first < 0x80) {
    ++pos;
    return item{false, std::string(1, static_cast<char>(first))};
  }
  const bool is_list = first >= 0xc0;
  const unsigned char base = is_list ? 0xc0 : 0x80;
  size_t length = 0;
  size_t header = 1;
  if (first - base <= 55) {
    length = first - base;
  } else {
    const size_t length_of_length = first - base - 55;
    if (length_of_length > 8 || pos + 1 + length_of_length > in.size())
      return std::nullopt;
    if (in[pos + 1] == '\0') // leading zero in the length: not canonical
      return std::nullopt;
    for (size_t i = 0; i < length_of_length; ++i)
      length = length << 8 | static_cast<unsigned char>(in[pos + 1 + i]);
    if (length <= 55) // a short form was possible
      return std::nullopt;
    header += length_of_length;
  }
  if (length > in.size() - pos - header)
    return std::nullopt;
  item it{is_list, std::string(in.substr(pos + header, length))};
  // A single byte < 0x80 must be encoded as itself.
  if (!is_list && length == 1 && static_cast<unsigned char>(it.payload[0]) < 0x80)
    return std::nullopt;
  pos += header + length;
  return it;
}

} // namespace

std::optional<std::vector<item>> decode_list(std::string_view encoded) {
  size_t pos = 0;
  auto outer = read_item(encoded, pos);
  if (!outer || !outer->is_list || pos != encoded.size())
    return std::nullopt;
  std::vector<item> items;
  size_t at = 0;
  while (at < outer->payload.size()) {
    auto it = read_item(outer->payload, at);
    if (!it)
      return std::nullopt;
    items.push_back(std::move(*it));
  }
  return items;
}

std::optional<uint256> decode_uint(const item& it) {
  if (it.is_list || it.payload.size() > 32)
    return std::nullopt;
  if (!it.payload.empty() && it.payload[0] == '\0')
    return std::nullopt;
  return uint256::from_big_endian(it.payload);
}

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
