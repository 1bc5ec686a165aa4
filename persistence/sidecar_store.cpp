#include "persistence/sidecar_store.hpp"

#include "persistence/db.hpp"

namespace mg::db {

int expire_template_proposals(pqxx::transaction_base& tx, int limit) {
  static const statement q{"mg_expire_proposals",
                           "WITH due AS ("
                           "  SELECT id FROM template_proposals"
                           "  WHERE state = 'pending' AND expires_at < now()"
                           "  ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)"
                           " UPDATE template_proposals p SET state = 'expired',"
                           "   updated_at = clock_timestamp()"
                           " FROM due WHERE p.id = due.id"};
  return static_cast<int>(exec(tx, q, limit).affected_rows());
}

int promote_audit_outbox(pqxx::transaction_base& tx, int limit) {
  // SKIP LOCKED keeps concurrent promoters on disjoint rows; the shared id
  // (primary key of audit_events) makes a second copy impossible anyway.
  static const statement q{
      "mg_promote_audit",
      "WITH batch AS ("
      "  SELECT id, actor, action, subject, detail, occurred_at FROM audit_outbox"
      "  WHERE promoted_at IS NULL ORDER BY occurred_at LIMIT $1 FOR UPDATE SKIP LOCKED),"
      " copied AS ("
      "  INSERT INTO audit_events (id, actor, action, subject, detail, occurred_at)"
      "  SELECT id, actor, action, subject, detail, occurred_at FROM batch"
      "  ON CONFLICT (id) DO NOTHING)"
      " UPDATE audit_outbox o SET promoted_at = clock_timestamp()"
      " FROM batch WHERE o.id = batch.id"};
  return static_cast<int>(exec(tx, q, limit).affected_rows());
}

const char* to_string(health_state h) {
  switch (h) {
  case health_state::up:
    return "up";
  case health_state::down:
    return "down";
  case health_state::unknown:
    return "unknown";
  }
  return "unknown";
}

void record_executor_health(pqxx::transaction_base& tx, const std::string& executor_key,
                            const std::string& runtime_node, health_state h) {
  static const statement q{
      "mg_record_executor_health",
      "INSERT INTO executors (executor_key, runtime_node, health_state, last_health_checked_at)"
      " VALUES ($1, $2, $3, now())"
      " ON CONFLICT (executor_key, runtime_node) DO UPDATE SET"
      "   health_state = CASE WHEN EXCLUDED.health_state = 'unknown'"
      "                  THEN executors.health_state ELSE EXCLUDED.health_state END,"
      "   last_health_checked_at = EXCLUDED.last_health_checked_at"};
  exec(tx, q, executor_key, runtime_node, to_string(h));
}

void record_signer_health(pqxx::transaction_base& tx, const std::string& signer_key,
                          const std::string& runtime_node, health_state h,
                          const std::optional<std::string>& observed_address) {
  static const statement q{
      "mg_record_signer_health",
      "INSERT INTO signers (signer_key, runtime_node, health_state, observed_signer_address,"
      "   status, last_health_checked_at)"
      " VALUES ($1, $2, $3, $4, 'active', now())"
      " ON CONFLICT (signer_key, runtime_node) DO UPDATE SET"
      "   health_state = CASE WHEN EXCLUDED.health_state = 'unknown'"
      "                  THEN signers.health_state ELSE EXCLUDED.health_state END,"
      "   observed_signer_address = COALESCE(EXCLUDED.observed_signer_address,"
      "                                      signers.observed_signer_address),"
      "   status = 'active',"
      "   last_health_checked_at = EXCLUDED.last_health_checked_at"};
  exec(tx, q, signer_key, runtime_node, to_string(h),
       observed_address ? observed_address->c_str() : nullptr);
}

int orphan_absent_signers(pqxx::transaction_base& tx, const std::string& runtime_node,
                          const std::vector<std::string>& present) {
  static const statement q{"mg_orphan_signers",
                           "UPDATE signers SET status = 'orphan', observed_signer_address = NULL"
                           " WHERE runtime_node = $1 AND NOT (signer_key = ANY ($2::text[]))"
                           "   AND (status <> 'orphan' OR observed_signer_address IS NOT NULL)"};
  return static_cast<int>(exec(tx, q, runtime_node, text_array(present)).affected_rows());
}

} // namespace mg::db
