#include "persistence/notification_store.hpp"

#include "persistence/db.hpp"

namespace mg::db {

bool enqueue_notification(pqxx::transaction_base& tx, const notification& n) {
  static const statement q{
      "mg_enqueue_notification",
      "INSERT INTO notification_outbox (kind, subject, dedupe_key, payload)"
      " VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT (dedupe_key) DO NOTHING RETURNING id"};
  return !exec(tx, q, n.kind, n.subject, n.dedupe_key, n.payload_json).empty();
}

} // namespace mg::db
