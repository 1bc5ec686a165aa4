#include "persistence/sim_ledger_store.hpp"

#include <set>

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

std::vector<sim_accept_outcome> sim_ledger_accept_all(pqxx::transaction_base& w,
                                                      const std::vector<sim_ledger_key>& keys) {
  static const statement accept_all{
      "sim_accept_all",
      "INSERT INTO sim_ledger (idempotency_key, node_id, attempt_no, action_type)"
      " SELECT k, n::uuid, a::int, t FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])"
      "   AS x(k, n, a, t)"
      " ON CONFLICT (idempotency_key) DO NOTHING RETURNING idempotency_key"};
  // A key already there was accepted or fenced before: a statement of its
  // own (a fresh snapshot) tells which, as for one key.
  static const statement fenced_among{
      "sim_fenced_among",
      "SELECT idempotency_key FROM sim_ledger WHERE idempotency_key = ANY($1::text[]) AND fenced"};
  std::vector<std::string> ids, nodes, attempts, actions;
  for (auto& k : keys) {
    ids.push_back(k.idempotency_key);
    nodes.push_back(k.node_id);
    attempts.push_back(std::to_string(k.attempt_no));
    actions.push_back(k.action_type);
  }
  auto inserted = exec(w, accept_all, text_array(ids), text_array(nodes), text_array(attempts),
                       text_array(actions));
  std::vector<sim_accept_outcome> out(keys.size(), sim_accept_outcome::accepted);
  if (inserted.size() == keys.size())
    return out;
  std::set<std::string> fenced;
  for (auto row : exec(w, fenced_among, text_array(ids)))
    fenced.insert(row[0].c_str());
  for (size_t i = 0; i < keys.size(); ++i)
    if (fenced.count(keys[i].idempotency_key))
      out[i] = sim_accept_outcome::fenced;
  return out;
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
