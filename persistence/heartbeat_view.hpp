#pragma once
// worker_heartbeats as the admin listener shows them (/admin/workers).
#include <pqxx/pqxx>
#include <string>

namespace mg::db {

/// Every worker_heartbeats row as a JSON array of objects: worker_name,
/// runtime_node, network_class, worker_group, status, last_heartbeat_at,
/// heartbeat_age_seconds, iterations, items_processed, consecutive_errors,
/// last_error; ordered by runtime_node, worker_name.
std::string worker_heartbeats_json(pqxx::connection& c);

} // namespace mg::db
