#pragma once
// An Ethereum JSON-RPC 2.0 client over HTTP: the calls the `evm` executor,
// evm_nonce_reaper and verify_drift make. Quantities come back as uint256,
// never double; byte strings as raw bytes.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "domain/uint256.hpp"
#include "executors/json_http_client.hpp"

namespace mg::executors {

/// The node answered with a JSON-RPC error object: the request reached the
/// chain and was refused (nonce too low, reverted estimate, ...).
struct rpc_refused : domain::executor_error {
  rpc_refused(int code, const std::string& message, std::string data)
      : domain::executor_error("JSON-RPC error " + std::to_string(code) + ": " + message),
        code(code), data(std::move(data)) {}
  int code;
  std::string data; // the error's `data` member as JSON text ("" when absent)
};

struct evm_receipt {
  bool success = false; // status 0x1
  std::uint64_t block_number = 0;
  domain::uint256 gas_used;
  domain::uint256 effective_gas_price;
};

struct evm_transaction_call {
  std::string from; // 20 bytes
  std::string to;   // 20 bytes
  domain::uint256 value;
  std::string data;
  std::optional<domain::uint256> gas;
};

class evm_rpc {
public:
  evm_rpc(const std::string& url, double timeout_seconds);

  /// One call; returns the `result` member as JSON text. Transport failures
  /// and malformed replies throw domain::executor_error, an error object
  /// throws rpc_refused.
  std::string call(const std::string& method, const std::string& params_json) const;

  std::uint64_t chain_id() const;
  std::uint64_t block_number() const;
  domain::uint256 balance(const std::string& address) const;
  /// eth_getTransactionCount at "latest" (mined) or "pending".
  domain::uint256 transaction_count(const std::string& address, const char* block) const;
  /// The latest block's baseFeePerGas (0 before London).
  domain::uint256 base_fee() const;
  domain::uint256 max_priority_fee() const;
  domain::uint256 estimate_gas(const evm_transaction_call& tx) const;
  /// eth_call at `block` ("latest" or a 0x quantity): the returned bytes.
  std::string eth_call(const evm_transaction_call& tx, const std::string& block) const;
  /// The transaction hash (32 bytes) the node reports.
  std::string send_raw_transaction(const std::string& raw) const;
  std::optional<evm_receipt> receipt(const std::string& tx_hash) const;
  /// The node knows the transaction (pending or mined).
  bool transaction_known(const std::string& tx_hash) const;
  /// Deployed bytecode at `address` (empty for an account without code).
  std::string code(const std::string& address) const;

  const std::string& origin() const { return http_.origin(); }

private:
  json_http_client http_;
};

/// One client per chain id of a parsed MG_EVM_RPC_URLS.
std::map<std::uint64_t, evm_rpc> evm_rpc_clients(const std::map<std::uint64_t, std::string>& urls,
                                                 double timeout_seconds);

} // namespace mg::executors
