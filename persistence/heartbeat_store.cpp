#include "persistence/heartbeat_store.hpp"

#include "persistence/db.hpp"

namespace mg::db {

void seed_heartbeats(pqxx::connection& c, const std::vector<std::string>& workers,
                     const std::vector<std::string>& groups, const std::string& runtime_node,
                     const std::string& network_class) {
  pqxx::work tx(c);
  tx.exec_params(
      "INSERT INTO worker_heartbeats (worker_name, worker_group, runtime_node, network_class,"
      " status, last_heartbeat_at, iterations, items_processed, consecutive_errors, last_error)"
      " SELECT w, g, $3, $4, 'starting', now(), 0, 0, 0, NULL"
      " FROM unnest($1::text[], $2::text[]) AS u(w, g)"
      " ON CONFLICT (worker_name, runtime_node, network_class) DO UPDATE SET"
      " worker_group = EXCLUDED.worker_group, status = 'starting', last_heartbeat_at = now(),"
      " iterations = 0, items_processed = 0, consecutive_errors = 0, last_error = NULL",
      text_array(workers), text_array(groups), runtime_node, network_class);
  tx.commit();
}

void beat(pqxx::connection& c, const heartbeat_key& key, const heartbeat& h) {
  pqxx::nontransaction tx(c);
  static const statement q{
      "mg_beat", "INSERT INTO worker_heartbeats (worker_name, runtime_node, network_class,"
                 " status, last_heartbeat_at, iterations, items_processed, consecutive_errors,"
                 " last_error) VALUES ($1, $2, $3, $4, now(), $5, $6, $7, $8)"
                 " ON CONFLICT (worker_name, runtime_node, network_class) DO UPDATE SET"
                 " status = EXCLUDED.status, last_heartbeat_at = now(),"
                 " iterations = worker_heartbeats.iterations + EXCLUDED.iterations,"
                 " items_processed = worker_heartbeats.items_processed + EXCLUDED.items_processed,"
                 " consecutive_errors = EXCLUDED.consecutive_errors,"
                 " last_error = COALESCE(EXCLUDED.last_error, worker_heartbeats.last_error)"};
  exec(tx, q, key.worker_name, key.runtime_node, key.network_class, h.status, h.iterations, h.items,
       h.consecutive_errors, null_if_empty(h.last_error));
}

} // namespace mg::db
