#pragma once
// The always-on sidecar workers' SQL (reference §6, §8, §9; approval
// expiry is the request store's): template-proposal expiry, audit promotion, executor and signer
// health. Every batch claims with FOR UPDATE SKIP LOCKED, so any number of
// processes can run the same sidecar.
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace mg::db {

/// Pending template proposals past expires_at → 'expired' (SKIP LOCKED,
/// at most `limit`). Returns how many.
int expire_template_proposals(pqxx::transaction_base& tx, int limit);

/// Copies at most `limit` unpromoted audit_outbox rows into audit_events
/// (same id, so a row lands once) and marks them promoted. Returns how many.
int promote_audit_outbox(pqxx::transaction_base& tx, int limit);

/// health_state values of the executors/signers tables.
enum class health_state { up, down, unknown };

const char* to_string(health_state h);

/// Upserts (executor_key, runtime_node) with last_health_checked_at = now.
/// `unknown` (health not implemented) never overwrites a stored state.
void record_executor_health(pqxx::transaction_base& tx, const std::string& executor_key,
                            const std::string& runtime_node, health_state h);

/// As record_executor_health for a signer, which is (again) active; a
/// canonical `observed_address` replaces the stored observation, nullopt
/// keeps it. Never touches signer_identities.
void record_signer_health(pqxx::transaction_base& tx, const std::string& signer_key,
                          const std::string& runtime_node, health_state h,
                          const std::optional<std::string>& observed_address);

/// Signer rows of `runtime_node` whose key is not in `present` become
/// 'orphan' with no observed address. Returns how many rows changed.
int orphan_absent_signers(pqxx::transaction_base& tx, const std::string& runtime_node,
                          const std::vector<std::string>& present);

} // namespace mg::db
