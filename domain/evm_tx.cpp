#include "domain/evm_tx.hpp"

#include <stdexcept>
#include <vector>

#include "domain/evm_tx_decode.hpp"
#include "domain/hash.hpp"
#include "domain/keccak.hpp"
#include "domain/rlp.hpp"

namespace mg::domain {

namespace {

/// The six fields both legacy encodings start with: nonce up to data.
std::vector<std::string> legacy_fields(const legacy_tx& tx) {
  return {rlp::encode_uint(tx.nonce),     rlp::encode_uint(tx.gas_price),
          rlp::encode_uint(tx.gas_limit), rlp::encode_bytes(tx.to),
          rlp::encode_uint(tx.value),     rlp::encode_bytes(tx.data)};
}

/// The EIP-1559 fields up to and including the (empty) access list.
std::vector<std::string> eip1559_fields(const eip1559_tx& tx) {
  return {rlp::encode_uint(tx.chain_id),
          rlp::encode_uint(tx.nonce),
          rlp::encode_uint(tx.max_priority_fee_per_gas),
          rlp::encode_uint(tx.max_fee_per_gas),
          rlp::encode_uint(tx.gas_limit),
          rlp::encode_bytes(tx.to),
          rlp::encode_uint(tx.value),
          rlp::encode_bytes(tx.data),
          rlp::encode_list({})};
}

constexpr char eip1559_type = 0x02;

bool is_hex_digit(char c) {
  return hex_digit_value(c) >= 0;
}

} // namespace

std::string signing_data(const legacy_tx& tx) {
  auto fields = legacy_fields(tx);
  fields.push_back(rlp::encode_uint(tx.chain_id));
  fields.push_back(rlp::encode_uint(0));
  fields.push_back(rlp::encode_uint(0));
  return rlp::encode_list(fields);
}

std::string signing_data(const eip1559_tx& tx) {
  return eip1559_type + rlp::encode_list(eip1559_fields(tx));
}

std::optional<eip1559_tx> parse_eip1559_signing_data(std::string_view bytes) {
  auto decoded = decode_evm_signing_data(bytes);
  if (!decoded || decoded->kind != evm_tx_kind::eip1559 || !decoded->access_list.empty())
    return std::nullopt;
  eip1559_tx tx;
  tx.chain_id = decoded->chain_id;
  tx.nonce = decoded->nonce;
  tx.max_priority_fee_per_gas = decoded->max_priority_fee_per_gas;
  tx.max_fee_per_gas = decoded->max_fee_per_gas;
  tx.gas_limit = decoded->gas_limit;
  tx.to = std::move(decoded->to);
  tx.value = decoded->value;
  tx.data = std::move(decoded->data);
  return tx;
}

std::string signing_hash(const legacy_tx& tx) {
  return keccak256(signing_data(tx));
}
std::string signing_hash(const eip1559_tx& tx) {
  return keccak256(signing_data(tx));
}

std::string signed_raw(const legacy_tx& tx, const evm_signature& sig) {
  auto v =
      checked_add(checked_mul(tx.chain_id, 2).value(), static_cast<std::uint64_t>(35 + sig.recid));
  auto fields = legacy_fields(tx);
  fields.push_back(rlp::encode_uint(*v));
  fields.push_back(rlp::encode_uint(sig.r));
  fields.push_back(rlp::encode_uint(sig.s));
  return rlp::encode_list(fields);
}

std::string signed_raw(const eip1559_tx& tx, const evm_signature& sig) {
  auto fields = eip1559_fields(tx);
  fields.push_back(rlp::encode_uint(static_cast<std::uint64_t>(sig.recid)));
  fields.push_back(rlp::encode_uint(sig.r));
  fields.push_back(rlp::encode_uint(sig.s));
  return eip1559_type + rlp::encode_list(fields);
}

std::string transaction_hash(std::string_view raw) {
  return keccak256(raw);
}

std::optional<evm_signature> parse_signature_65(std::string_view hex) {
  auto bytes = parse_0x_hex(hex);
  if (!bytes || bytes->size() != 65)
    return std::nullopt;
  int v = static_cast<unsigned char>((*bytes)[64]);
  if (v >= 27)
    v -= 27;
  if (v != 0 && v != 1)
    return std::nullopt;
  return evm_signature{*uint256::from_big_endian(bytes->substr(0, 32)),
                       *uint256::from_big_endian(bytes->substr(32, 32)), v};
}

std::string format_signature_65(const evm_signature& sig) {
  return to_0x_hex(sig.r.to_big_endian_32() + sig.s.to_big_endian_32() +
                   static_cast<char>(27 + sig.recid));
}

std::optional<std::string> eip55_checksum(std::string_view text) {
  if (text.size() != 42 || text[0] != '0' || text[1] != 'x')
    return std::nullopt;
  std::string lower;
  for (char c : text.substr(2)) {
    if (!is_hex_digit(c))
      return std::nullopt;
    lower += static_cast<char>(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
  }
  std::string digest = keccak256_hex(lower);
  std::string out = "0x";
  for (size_t i = 0; i < lower.size(); ++i) {
    char c = lower[i];
    bool upper = c >= 'a' && hex_digit_value(digest[i]) >= 8;
    out += static_cast<char>(upper ? c - 'a' + 'A' : c);
  }
  return out;
}

address_case classify_evm_address(std::string_view text) {
  auto checksummed = eip55_checksum(text);
  if (!checksummed)
    return address_case::invalid;
  bool has_lower = false, has_upper = false;
  for (char c : text.substr(2)) {
    has_lower = has_lower || (c >= 'a' && c <= 'f');
    has_upper = has_upper || (c >= 'A' && c <= 'F');
  }
  if (!(has_lower && has_upper))
    return address_case::unchecksummed;
  return text == *checksummed ? address_case::checksummed : address_case::invalid;
}

std::optional<std::string> parse_evm_address(std::string_view text) {
  if (classify_evm_address(text) == address_case::invalid)
    return std::nullopt;
  return from_hex(text.substr(2));
}

std::string evm_address_of_public_key(std::string_view xy) {
  std::string hex = keccak256_hex(xy).substr(24);
  return *eip55_checksum("0x" + hex);
}

std::string erc20_transfer_calldata(std::string_view to, const uint256& amount) {
  if (to.size() != 20)
    throw std::invalid_argument("erc20 transfer: the recipient must be 20 bytes");
  static const std::string selector("\xa9\x05\x9c\xbb", 4);
  return selector + std::string(12, '\0') + std::string(to) + amount.to_big_endian_32();
}

std::string to_0x_hex(std::string_view bytes) {
  return "0x" + to_hex(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

std::optional<std::string> parse_0x_hex(std::string_view text) {
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
    text.remove_prefix(2);
  return from_hex(text);
}

} // namespace mg::domain
