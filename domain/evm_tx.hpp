#pragma once
// EVM transactions as the `evm` executor builds them and the `evm_local`
// signer signs them: legacy EIP-155 and EIP-1559 (type 2) transactions, their
// signing hashes and signed raw bytes; EIP-55 checksummed addresses; ERC-20
// `transfer` calldata. Pure: bytes in, bytes out.
//
// Byte strings (addresses, data, hashes, raw transactions) are raw bytes in
// std::string; hex appears only at the edges (to_0x_hex, parse_* below).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "domain/uint256.hpp"

namespace mg::domain {

/// Legacy transaction with EIP-155 replay protection.
struct legacy_tx {
  uint256 nonce;
  uint256 gas_price;
  uint256 gas_limit;
  std::string to; // 20 bytes; empty = contract creation
  uint256 value;
  std::string data;
  std::uint64_t chain_id = 1;
};

/// EIP-1559 (type 2) transaction; the access list is always empty.
struct eip1559_tx {
  std::uint64_t chain_id = 1;
  uint256 nonce;
  uint256 max_priority_fee_per_gas;
  uint256 max_fee_per_gas;
  uint256 gas_limit;
  std::string to; // 20 bytes; empty = contract creation
  uint256 value;
  std::string data;
};

/// A secp256k1 signature over a signing hash. recid (0 or 1) is the
/// recovery id: the parity of the nonce point's y, which is what lets a node
/// recover the sender. A wrong one recovers a random sender (whose balance
/// is zero: the node answers "insufficient funds", hiding the cause).
struct evm_signature {
  uint256 r;
  uint256 s;
  int recid = 0;
};

/// The bytes whose Keccak-256 is signed: rlp([nonce, gasPrice, gas, to,
/// value, data, chainId, 0, 0]) (EIP-155) and 0x02 ‖ rlp([chainId, nonce,
/// maxPriorityFee, maxFee, gas, to, value, data, []]) (EIP-1559).
std::string signing_data(const legacy_tx& tx);
std::string signing_data(const eip1559_tx& tx);

/// The transaction whose signing_data is `bytes` (0x02 ‖ canonical RLP of
/// the nine fields, an empty access list), or nullopt: lets the submitter
/// check exactly what a signature covers before it broadcasts anything.
std::optional<eip1559_tx> parse_eip1559_signing_data(std::string_view bytes);

/// Keccak-256 of signing_data: 32 bytes.
std::string signing_hash(const legacy_tx& tx);
std::string signing_hash(const eip1559_tx& tx);

/// The raw transaction eth_sendRawTransaction takes. Legacy: v = recid +
/// chainId·2 + 35. EIP-1559: yParity = recid. r and s lose leading zeros.
std::string signed_raw(const legacy_tx& tx, const evm_signature& sig);
std::string signed_raw(const eip1559_tx& tx, const evm_signature& sig);

/// The transaction hash a node reports: Keccak-256 of the raw bytes.
std::string transaction_hash(std::string_view raw);

/// `0x` + 130 hex digits r ‖ s ‖ v with v in {0, 1, 27, 28} (both
/// conventions are in use), or nullopt.
std::optional<evm_signature> parse_signature_65(std::string_view hex);
/// `0x` + r ‖ s ‖ v, v written as 27 + recid (the eth_sign convention).
std::string format_signature_65(const evm_signature& sig);

// --- addresses (EIP-55) -----------------------------------------------------

/// How an address was written.
enum class address_case {
  invalid,       // not 0x + 40 hex digits, or mixed case with a wrong checksum
  unchecksummed, // all lower or all upper case hex: carries no checksum
  checksummed,   // mixed case matching EIP-55
};

/// EIP-55: mixed case must match the checksum; single-case addresses are
/// valid but carry no checksum (the EIP's own rule). Callers that must not
/// accept a typo-prone address (the executor's destination) require
/// `checksummed`.
address_case classify_evm_address(std::string_view text);

/// The EIP-55 form of `0x` + 40 hex digits of any case, or nullopt. A hex
/// nibble is upper-cased when the same nibble of Keccak-256(lower-case hex
/// without 0x) is >= 8.
std::optional<std::string> eip55_checksum(std::string_view text);

/// The 20 address bytes when classify_evm_address is not invalid.
std::optional<std::string> parse_evm_address(std::string_view text);

/// The EIP-55 address of an uncompressed secp256k1 public key (64 bytes
/// x ‖ y, without the 0x04 prefix): the last 20 bytes of its Keccak-256.
std::string evm_address_of_public_key(std::string_view xy);

// --- ERC-20 -----------------------------------------------------------------

/// Calldata of `transfer(address,uint256)`: selector a9059cbb, then the
/// address and the amount as 32-byte ABI words. `to` is 20 bytes.
std::string erc20_transfer_calldata(std::string_view to, const uint256& amount);

// --- hex ----------------------------------------------------------------------

/// `0x` + lower-case hex.
std::string to_0x_hex(std::string_view bytes);
/// The bytes of `0x` + an even number of hex digits (the 0x is optional), or
/// nullopt.
std::optional<std::string> parse_0x_hex(std::string_view text);

} // namespace mg::domain
