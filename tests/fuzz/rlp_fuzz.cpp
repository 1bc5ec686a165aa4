// RLP decoding (domain/rlp), canonical form only. Invariants: a decoded
// list re-encodes to exactly the input bytes (so only canonical RLP is
// accepted), nested lists decode the same way, and a decoded integer
// re-encodes to its item.
#include "domain/rlp.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg::domain;

namespace {

/// The encoding of one decoded item.
std::string encode_item(const rlp::item& it) {
  if (!it.is_list)
    return rlp::encode_bytes(it.payload);
  // A list item's payload is its items' encodings already: wrap it.
  return rlp::encode_list({it.payload});
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in = mg::fuzz::bytes(data, size);
  // Walk nested lists without recursion; each decoded list must re-encode.
  std::vector<std::string> todo{std::string(in)};
  while (!todo.empty()) {
    std::string enc = std::move(todo.back());
    todo.pop_back();
    auto items = rlp::decode_list(enc);
    if (!items)
      continue;
    std::vector<std::string> encoded;
    for (const auto& it : *items) {
      encoded.push_back(encode_item(it));
      if (it.is_list) {
        // A nested list's encoding must decode as a list again.
        MG_FUZZ_CHECK(rlp::decode_list(encoded.back()).has_value(), "nested list decodes");
        todo.push_back(encoded.back());
      } else if (auto n = rlp::decode_uint(it)) {
        MG_FUZZ_CHECK(rlp::encode_uint(*n) == encoded.back(), "integer re-encodes to its item");
      }
    }
    MG_FUZZ_CHECK(rlp::encode_list(encoded) == enc, "canonical: decode then encode is identity");
  }
  // encode → decode for the input as one byte string.
  auto wrapped = rlp::decode_list(rlp::encode_list({rlp::encode_bytes(in)}));
  MG_FUZZ_CHECK(wrapped && wrapped->size() == 1 && !(*wrapped)[0].is_list &&
                    (*wrapped)[0].payload == in,
                "bytes round trip");
  return 0;
}
