#include "domain/rlp.hpp"

#include <vector>

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

/// Where one item lies in its input: list or bytes, and its payload.
struct item_span {
  bool is_list = false;
  size_t payload_at = 0;
  size_t length = 0;
};

/// Reads one item's header at `pos` (no copy); advances `pos` past the item.
std::optional<item_span> read_span(std::string_view in, size_t& pos) {
  if (pos >= in.size())
    return std::nullopt;
  const auto first = static_cast<unsigned char>(in[pos]);
  if (first < 0x80)
    return item_span{false, pos++, 1};
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
  // A single byte < 0x80 must be encoded as itself.
  if (!is_list && length == 1 && static_cast<unsigned char>(in[pos + header]) < 0x80)
    return std::nullopt;
  item_span span{is_list, pos + header, length};
  pos += header + length;
  return span;
}

/// Reads one item at `pos`; advances `pos` past it.
std::optional<item> read_item(std::string_view in, size_t& pos) {
  auto span = read_span(in, pos);
  if (!span)
    return std::nullopt;
  return item{span->is_list, std::string(in.substr(span->payload_at, span->length))};
}

/// Whether every list nested in `payload` (a list's payload) is canonical
/// RLP too, at any depth: walked with an explicit stack, never recursing on
/// the input's nesting, each byte read once.
bool nested_lists_canonical(std::string_view payload) {
  std::vector<std::string_view> todo{payload};
  while (!todo.empty()) {
    std::string_view list = todo.back();
    todo.pop_back();
    size_t at = 0;
    while (at < list.size()) {
      auto span = read_span(list, at);
      if (!span)
        return false;
      if (span->is_list)
        todo.push_back(list.substr(span->payload_at, span->length));
    }
  }
  return true;
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
    if (!it || (it->is_list && !nested_lists_canonical(it->payload)))
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
