#include "persistence/sim_ledger_store.hpp"

#include "persistence/db.hpp"

namespace mg::db {

namespace {

const statement fenced_q{"sim_fenced", "SELECT fenced FROM sim_ledger WHERE idempotency_key = $1"};

bool is_fenced(pqxx::transaction_base& w, const std::string& idempotency_key) {
  return exec(w, fenced_q, idempotency_key)[0][0].as<bool>();
}

} // namespace

sim_accept_outcome sim_ledger_accept(pqxx::transaction_base& w, const sim_ledger_key& key) {
  static const statement accept{
      "sim_accept",
      "INSERT INTO sim_ledger (idempotency_key, node_id, attempt_no, action_type)"
      " VALUES ($1, $2, $3, $4) ON CONFLICT (idempotency_key) DO NOTHING RETURNING 1"};
  auto inserted =
      exec(w, accept, key.idempotency_key, key.node_id, key.attempt_no, key.action_type);
  if (inserted.empty() && is_fenced(w, key.idempotency_key))
    return sim_accept_outcome::fenced;
  return sim_accept_outcome::accepted;
}

bool sim_ledger_fence(pqxx::transaction_base& tx, const sim_ledger_key& key) {
  static const statement fence{
      "sim_fence",
      "INSERT INTO sim_ledger (idempotency_key, node_id, attempt_no, action_type, fenced)"
      " VALUES ($1, $2, $3, $4, true) ON CONFLICT (idempotency_key) DO NOTHING RETURNING 1"};
  auto fenced_now =
      exec(tx, fence, key.idempotency_key, key.node_id, key.attempt_no, key.action_type);
  return !fenced_now.empty() || is_fenced(tx, key.idempotency_key);
}

} // namespace mg::db
