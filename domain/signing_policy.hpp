#pragma once
// What may be signed (SPEC §4): the engine, not the executor, decides. For
// the EVM transfers it knows (`evm_transfer`, `erc20_transfer`) the prepared
// payload must be the transaction's signing data (payload_format
// `evm_signing_data`, legacy EIP-155 or EIP-1559), and its chain id,
// recipient, value, ERC-20 token and `transfer(to, amount)` call must be
// exactly what the node's resolved config and the intent say (amount in
// base units of the template's decimals); its fee is capped, its access list
// empty, its nonce the node's reservation. A bare hash is never signable.
// Other formats pass when the payload hashes (SHA-256) to the prepared
// payload_hash; only a signer configured for the format by name signs them.
// The SignRequest is then built as the reference builds it, with the
// engine's allowed_payload_hash. Pure.
#include <cstdint>
#include <optional>
#include <string>

#include "domain/executor.hpp"

namespace mg::domain {

inline constexpr const char* signing_policy_mismatch = "SIGNING_POLICY_MISMATCH";
inline constexpr const char* evm_signing_data_payload = "evm_signing_data";
inline constexpr const char* evm_signing_hash_payload = "evm_signing_hash";

/// The nonce the node's attempt holds (persistence/evm_nonce_store).
struct nonce_reservation {
  std::uint64_t chain_id = 0;
  std::uint64_t nonce = 0;
};

struct signing_verdict {
  bool allowed = false;
  /// Why not, naming the field (chain_id, recipient, value, token, calldata,
  /// access_list, fee, nonce, payload_hash, payload_format).
  std::string detail;
  /// The hash the signer may sign: the engine's own hash of the payload that
  /// passed, spelled as the executor spelled payload_hash.
  std::string allowed_payload_hash;
};

/// Whether the payload an executor prepared for ctx's node may be signed.
/// `reservation`: the attempt's EVM nonce reservation, if any.
signing_verdict check_signing_policy(const execution_context& ctx, const prepared_action& action,
                                     const std::optional<nonce_reservation>& reservation);

/// The SignRequest of the reference's dispatch (protocol 1.0): intent.asset,
/// amount and destination from the intent (create refuses non-string ones),
/// chain_family from input_params (default "evm"), metadata = input_params,
/// payload, format and hash from the prepared action; allowed_payload_hash
/// is the engine's.
sign_request build_sign_request(const execution_context& ctx, const prepared_action& action,
                                const std::string& allowed_payload_hash);

} // namespace mg::domain
