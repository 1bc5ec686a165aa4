#include "domain/evm_tx_decode.hpp"

#include <vector>

#include "domain/rlp.hpp"

namespace mg::domain {

namespace {

constexpr char eip1559_type = 0x02;

bool is_address_field(const rlp::item& it) {
  return !it.is_list && (it.payload.empty() || it.payload.size() == 20);
}

std::optional<std::uint64_t> chain_id_of(const rlp::item& it) {
  auto v = rlp::decode_uint(it);
  auto small = v ? v->to_u64() : std::nullopt;
  if (!small || *small == 0)
    return std::nullopt;
  return small;
}

std::optional<decoded_evm_tx> decode_legacy(std::string_view bytes) {
  auto items = rlp::decode_list(bytes);
  if (!items || items->size() != 9)
    return std::nullopt;
  auto& f = *items;
  auto nonce = rlp::decode_uint(f[0]);
  auto price = rlp::decode_uint(f[1]);
  auto gas = rlp::decode_uint(f[2]);
  auto value = rlp::decode_uint(f[4]);
  auto chain = chain_id_of(f[6]);
  auto r = rlp::decode_uint(f[7]);
  auto s = rlp::decode_uint(f[8]);
  if (!nonce || !price || !gas || !value || !chain || !r || !s || !r->is_zero() || !s->is_zero())
    return std::nullopt;
  if (!is_address_field(f[3]) || f[5].is_list)
    return std::nullopt;
  decoded_evm_tx tx;
  tx.kind = evm_tx_kind::legacy_eip155;
  tx.chain_id = *chain;
  tx.nonce = *nonce;
  tx.gas_limit = *gas;
  tx.max_fee_per_gas = *price;
  tx.max_priority_fee_per_gas = *price;
  tx.to = f[3].payload;
  tx.value = *value;
  tx.data = f[5].payload;
  return tx;
}

std::optional<decoded_evm_tx> decode_1559(std::string_view bytes) {
  auto items = rlp::decode_list(bytes);
  if (!items || items->size() != 9)
    return std::nullopt;
  auto& f = *items;
  auto chain = chain_id_of(f[0]);
  auto nonce = rlp::decode_uint(f[1]);
  auto priority = rlp::decode_uint(f[2]);
  auto max_fee = rlp::decode_uint(f[3]);
  auto gas = rlp::decode_uint(f[4]);
  auto value = rlp::decode_uint(f[6]);
  if (!chain || !nonce || !priority || !max_fee || !gas || !value)
    return std::nullopt;
  if (!is_address_field(f[5]) || f[7].is_list || !f[8].is_list)
    return std::nullopt;
  decoded_evm_tx tx;
  tx.kind = evm_tx_kind::eip1559;
  tx.chain_id = *chain;
  tx.nonce = *nonce;
  tx.max_priority_fee_per_gas = *priority;
  tx.max_fee_per_gas = *max_fee;
  tx.gas_limit = *gas;
  tx.to = f[5].payload;
  tx.value = *value;
  tx.data = f[7].payload;
  tx.access_list = f[8].payload;
  return tx;
}

/// An already-encoded list payload behind its list prefix.
std::string list_of_payload(const std::string& payload) {
  // encode_list concatenates its items: one "item" that is the payload.
  return rlp::encode_list({payload});
}

} // namespace

std::optional<decoded_evm_tx> decode_evm_signing_data(std::string_view bytes) {
  if (bytes.empty())
    return std::nullopt;
  if (bytes[0] == eip1559_type)
    return decode_1559(bytes.substr(1));
  if (static_cast<unsigned char>(bytes[0]) >= 0xc0)
    return decode_legacy(bytes);
  return std::nullopt;
}

std::string encode_evm_signing_data(const decoded_evm_tx& tx) {
  using namespace rlp;
  if (tx.kind == evm_tx_kind::legacy_eip155)
    return encode_list({encode_uint(tx.nonce), encode_uint(tx.max_fee_per_gas),
                        encode_uint(tx.gas_limit), encode_bytes(tx.to), encode_uint(tx.value),
                        encode_bytes(tx.data), encode_uint(uint256(tx.chain_id)),
                        encode_uint(uint256(0)), encode_uint(uint256(0))});
  return std::string(1, eip1559_type) +
         encode_list({encode_uint(uint256(tx.chain_id)), encode_uint(tx.nonce),
                      encode_uint(tx.max_priority_fee_per_gas), encode_uint(tx.max_fee_per_gas),
                      encode_uint(tx.gas_limit), encode_bytes(tx.to), encode_uint(tx.value),
                      encode_bytes(tx.data), list_of_payload(tx.access_list)});
}

std::optional<uint256> max_fee_wei(const decoded_evm_tx& tx) {
  return checked_mul(tx.gas_limit, tx.max_fee_per_gas);
}

} // namespace mg::domain
