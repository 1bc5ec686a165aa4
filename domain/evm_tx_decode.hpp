#pragma once
// Decoding of the EVM transactions a signer is asked to sign: the signing
// data of a legacy EIP-155 transaction (rlp([nonce, gasPrice, gas, to,
// value, data, chainId, 0, 0])) and of an EIP-1559 one (0x02 ‖
// rlp([chainId, nonce, maxPriorityFee, maxFee, gas, to, value, data,
// accessList]))). The engine reads what an executor prepared with it before
// anything is signed, so every byte is hostile: only canonical RLP with the
// exact field count is accepted. Pure.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "domain/uint256.hpp"

namespace mg::domain {

enum class evm_tx_kind { legacy_eip155, eip1559 };

struct decoded_evm_tx {
  evm_tx_kind kind = evm_tx_kind::eip1559;
  std::uint64_t chain_id = 0;
  uint256 nonce;
  uint256 gas_limit;
  /// gasPrice for legacy transactions: what one unit of gas may cost at most.
  uint256 max_fee_per_gas;
  /// gasPrice again for legacy transactions.
  uint256 max_priority_fee_per_gas;
  std::string to; // 20 bytes; empty = contract creation
  uint256 value;
  std::string data;
  /// The access list's RLP payload (the concatenated encodings of its
  /// entries, not checked further); empty for legacy and for `[]`.
  std::string access_list;
};

/// The transaction whose signing data is `bytes`, or nullopt when the bytes
/// are not exactly one of the two forms above (a trailing byte, a
/// non-canonical integer, a `to` that is neither empty nor 20 bytes, a
/// chain id of 0 or above 2^64 - 1, legacy r/s placeholders other than 0).
std::optional<decoded_evm_tx> decode_evm_signing_data(std::string_view bytes);

/// The signing data of `tx`: decode_evm_signing_data(encode(tx)) == tx and,
/// for anything decode accepted, encode(decode(bytes)) == bytes.
std::string encode_evm_signing_data(const decoded_evm_tx& tx);

/// The most the transaction can pay in fees: gas limit × max fee per gas,
/// or nullopt when that overflows 2^256.
std::optional<uint256> max_fee_wei(const decoded_evm_tx& tx);

} // namespace mg::domain
