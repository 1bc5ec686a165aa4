#pragma once
// What an `evm` node asks for, read from its execution context: the node
// config (chain, confirmations, decimals, token, gas limit, poll interval)
// and the transfer the intent describes (recipient, exact base units,
// calldata). Pure: the executor checks these before touching a chain, and
// checks the signed bytes against them again before broadcasting.
#include <cstdint>
#include <optional>
#include <string>

#include "domain/executor.hpp"
#include "domain/uint256.hpp"

namespace mg::domain {

inline constexpr const char* evm_native_transfer = "evm_transfer";
inline constexpr const char* evm_token_transfer = "erc20_transfer";
inline constexpr const char* evm_finality_observe = "destination_chain_finality_observe";

/// A node whose config or intent cannot be executed: FAILED with `code`
/// where the step can say so, an executor_error elsewhere.
struct evm_refusal : executor_error {
  evm_refusal(std::string c, std::string d)
      : executor_error(c + ": " + d), code(std::move(c)), detail(std::move(d)) {}
  std::string code;
  std::string detail;
};

struct evm_node_config {
  std::uint64_t chain_id = 0;
  int confirmations = 1;
  int decimals = 18;
  std::string token; // 20 bytes (ERC-20 only)
  std::optional<uint256> gas_limit;
  double poll_seconds = 2;
  int submit_hold_ms = 0; // crash tests: hold after the broadcast
  std::string tx_hash;    // 32 bytes (finality observation only)
};

/// What a transfer sends.
struct evm_transfer_plan {
  std::string to; // the transaction's `to`: recipient, or the token contract
  uint256 value;
  std::string data;
  uint256 amount; // base units the recipient receives
};

bool is_evm_transfer(const std::string& action_type);

/// ctx.node_config read for ctx.action_type; throws evm_refusal
/// (CONFIG_INVALID) naming the field.
evm_node_config read_evm_config(const execution_context& ctx);

/// The transfer of ctx.intent: `amount` exactly in base units (> 0) to
/// `destination`, which must be EIP-55 checksummed. Throws evm_refusal
/// (INTENT_INVALID, INVALID_DESTINATION, INVALID_AMOUNT).
evm_transfer_plan plan_evm_transfer(const execution_context& ctx, const evm_node_config& c);

} // namespace mg::domain
