#include "persistence/heartbeat_view.hpp"

#include "persistence/db.hpp"

namespace mg::db {

namespace {

// PostgreSQL renders the JSON itself: one round trip, correct escaping.
const statement heartbeats_sql{
    "mg_heartbeat_view",
    "SELECT coalesce(json_agg(json_build_object("
    "  'worker_name', worker_name, 'runtime_node', runtime_node,"
    "  'network_class', network_class, 'worker_group', worker_group, 'status', status,"
    "  'last_heartbeat_at', last_heartbeat_at,"
    "  'heartbeat_age_seconds', round(extract(epoch FROM now() - last_heartbeat_at)::numeric, 3),"
    "  'iterations', iterations, 'items_processed', items_processed,"
    "  'consecutive_errors', consecutive_errors, 'last_error', last_error)"
    "  ORDER BY runtime_node, worker_name), '[]'::json)::text "
    "FROM worker_heartbeats"};

} // namespace

std::string worker_heartbeats_json(pqxx::connection& c) {
  pqxx::read_transaction tx(c);
  return str(exec(tx, heartbeats_sql)[0][0]);
}

} // namespace mg::db
