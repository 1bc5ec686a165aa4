#pragma once
// What the admin listener's health and metrics routes read from
// PostgreSQL: whether a primary answers, the worker heartbeats and the
// metrics snapshot. Each borrows one pooled connection and never throws:
// an unreachable database is an answer of its own.
#include <optional>
#include <string>

#include "persistence/connection_pool.hpp"
#include "persistence/metrics_store.hpp"

namespace mg::services {

/// Ready only with a primary: a pooled connection left on a demoted server
/// (or dropped by it) is replaced and the check made again on a fresh one.
bool database_accepts_writes(db::connection_pool& pool);

/// The worker_heartbeats rows as a JSON array; "null" while the database
/// is unreachable.
std::string worker_heartbeats_json(db::connection_pool& pool);

/// The database's metrics snapshot; nullopt (logged) when it cannot be read.
std::optional<db::metrics_snapshot>
read_metrics(db::connection_pool& pool, const std::string& network_class, double lease_seconds);

} // namespace mg::services
