#include "persistence/nonce_store.hpp"

#include "persistence/db.hpp"

namespace mg::db {

namespace {

const statement remember_sql{"mg_nonce_remember",
                             "INSERT INTO api_nonces (key_id, nonce) VALUES ($1, $2) "
                             "ON CONFLICT DO NOTHING"};

const statement prune_sql{"mg_nonce_prune",
                          "DELETE FROM api_nonces "
                          "WHERE seen_at < now() - make_interval(secs => $1::int)"};

} // namespace

bool remember_nonce(pqxx::connection& c, const std::string& key_id, const std::string& nonce) {
  pqxx::work tx(c);
  // No fsync wait for the nonce alone: a mutating call's own (synchronous)
  // commit on this connection flushes the WAL up to and including it, so only
  // a PostgreSQL crash within ~0.6 s could forget the nonce of a read or a
  // refusal. Saves a disk flush on every call.
  tx.exec("SET LOCAL synchronous_commit TO OFF");
  auto r = exec(tx, remember_sql, key_id, nonce);
  tx.commit();
  // ON CONFLICT DO NOTHING inserts nothing for a pair already remembered,
  // also when a concurrent request with the same nonce committed first.
  return r.affected_rows() == 1;
}

long prune_nonces(pqxx::connection& c, int max_age_seconds) {
  pqxx::work tx(c);
  auto r = exec(tx, prune_sql, max_age_seconds);
  tx.commit();
  return static_cast<long>(r.affected_rows());
}

} // namespace mg::db
