#pragma once
// The `evm` executor (issue 8): native-token (`evm_transfer`) and ERC-20
// (`erc20_transfer`) transfers signed by the process's `evm_local` signer,
// observed to `config.confirmations` blocks, plus
// `destination_chain_finality_observe` nodes that wait for confirmations of
// a predecessor's transaction (`config.tx_hash`).
//
// What moves is the intent's: `intent.amount` (decimal string, converted
// exactly with `config.decimals`) to `intent.destination` (EIP-55
// checksummed). Node config: `chain_id` (must match the endpoint's
// eth_chainId; endpoints come from MG_EVM_RPC_URLS), `confirmations`
// (default 1), `decimals` (default 18 native; required for ERC-20, and
// preflight checks the token's decimals() agrees: DECIMALS_MISMATCH),
// `token` (ERC-20 contract), optional `gas_limit`, `poll_seconds`
// (default 2). The template pins chain_id, token and decimals (SPEC §3).
//
// At most once: prepare reserves a nonce (persistence/evm_nonce_store);
// submit stores the signed bytes before it broadcasts them; recover looks the
// stored transaction up on chain and can only ever rebroadcast those same
// bytes. An attempt that never stored bytes is fenced by mining a 0-value
// self-send at its nonce, so nothing signed earlier can land there later.
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "domain/executor.hpp"
#include "executors/evm_local_signer.hpp"
#include "executors/evm_rpc.hpp"
#include "persistence/connection_pool.hpp"

namespace mg::executors {

class evm_executor : public domain::executor {
public:
  evm_executor(const std::map<std::uint64_t, std::string>& rpc_urls, double rpc_timeout_seconds,
               std::shared_ptr<db::connection_pool> pool, std::shared_ptr<evm_local_signer> signer);

  std::optional<domain::step_result> preflight(const domain::execution_context& ctx) override;
  std::optional<domain::prepared_action> prepare(const domain::execution_context& ctx) override;
  domain::step_result submit(const domain::execution_context& ctx,
                             const domain::prepared_action& action,
                             const domain::sign_result* signature) override;
  domain::step_result observe(const domain::execution_context& ctx) override;
  domain::recover_result recover(const domain::execution_context& ctx) override;
  /// Releases the attempt's nonce reservation (still only reserved).
  void abandon(const domain::execution_context& ctx,
               const domain::prepared_action& action) override;
  /// Up when every configured chain answers with its own chain id.
  domain::health_result health() override;

  /// The sending account (the signer's address), EIP-55.
  const std::string& sender() const { return signer_->address(); }

private:
  const evm_rpc& rpc_for(std::uint64_t chain_id) const;
  /// Broadcasts a 0-value self-send at `nonce`; its hash, or "" when the
  /// nonce turned out to be used already.
  std::string fence_nonce(const evm_rpc& rpc, std::uint64_t chain_id, std::uint64_t nonce);
  domain::step_result rebroadcast(const evm_rpc& rpc, const std::string& raw,
                                  const std::string& tx_hash, double poll_seconds);

  /// Sends the attempt's bytes again when the node lost them or holds them
  /// back although they are next.
  void put_back_if_stuck(const evm_rpc& rpc, const domain::execution_context& ctx,
                         const std::string& tx_hash, double poll_seconds);

  std::map<std::uint64_t, evm_rpc> rpcs_;
  std::shared_ptr<db::connection_pool> pool_;
  std::shared_ptr<evm_local_signer> signer_;
};

} // namespace mg::executors
