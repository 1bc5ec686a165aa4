#pragma once
// The built-in `sim` provider (SPEC §4): accepts every action type, driven
// by the node's `config.sim` (plus `submit_delay_ms` / `submit_hold_ms`
// around the ledger write, for crash tests), with an at-most-once ledger of its own
// (`sim_ledger`, written on its own connections, independent of the
// engine's transactions) that `recover` answers from.
#include <memory>
#include <set>
#include <string>

#include "domain/executor.hpp"
#include "persistence/connection_pool.hpp"

namespace mg::executors {

class sim_executor : public domain::executor {
public:
  explicit sim_executor(std::shared_ptr<db::connection_pool> ledger) : ledger_(std::move(ledger)) {}

  std::optional<domain::step_result> preflight(const domain::execution_context& ctx) override;
  std::optional<domain::prepared_action> prepare(const domain::execution_context& ctx) override;
  domain::step_result submit(const domain::execution_context& ctx,
                             const domain::prepared_action& action,
                             const domain::sign_result* signature) override;
  domain::step_result observe(const domain::execution_context& ctx) override;
  /// The plain submits of `calls` (no latency, delay, hold, refusal or
  /// scripted answer) share one ledger write; the others go one by one.
  std::vector<domain::step_result>
  submit_many(const std::vector<domain::submit_call>& calls) override;
  domain::recover_result recover(const domain::execution_context& ctx) override;
  domain::health_result health() override { return {}; }
  /// Only at `latency_ms = 0` without a scripted submit wait: preflight
  /// and prepare then only compute, and submit waits for nothing.
  bool claims_in_batch(const domain::execution_context& ctx) const override;

private:
  std::shared_ptr<db::connection_pool> ledger_;
};

/// Signs with an HMAC over the payload hash; refuses a payload_hash that
/// differs from signing_intent.allowed_payload_hash, a payload format it
/// was not configured to accept (by default only "json") and a payload
/// whose SHA-256 is not payload_hash (it hashes the payload itself).
class sim_signer : public domain::signer {
public:
  explicit sim_signer(std::set<std::string> accepted_formats = {"json"})
      : accepted_formats_(std::move(accepted_formats)) {}
  domain::sign_result sign(const domain::sign_request& req) override;
  domain::health_result health() override;
  bool signs_in_process() const override { return true; }

  static constexpr const char* address = "0x5157000000000000000000000000000000005157";

private:
  std::set<std::string> accepted_formats_;
};

/// The registry a process starts with: `sim` executor and signer.
domain::provider_registry builtin_providers(const std::string& database_url);

} // namespace mg::executors
