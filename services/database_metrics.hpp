#pragma once
// The /metrics families read from PostgreSQL and the API connection pool:
// every known state present (zero when empty), latency quantiles, worker
// heartbeats, cluster members.
#include <vector>

#include "config/metrics.hpp"
#include "persistence/connection_pool.hpp"
#include "persistence/metrics_store.hpp"
#include "services/service_context.hpp"

namespace mg::services {

/// The database families of a metrics snapshot.
std::vector<metrics::family> database_families(const db::metrics_snapshot& s);

/// movegate_db_pool_connections{state="in_use|idle"} and its bound.
std::vector<metrics::family> pool_families(const db::connection_pool::usage& u);

/// The database families read now on one pooled connection; empty (logged)
/// when the database cannot be read.
std::vector<metrics::family> database_metric_families(service_context& ctx);

/// The pool families of `ctx`'s connection pool as it is now.
std::vector<metrics::family> pool_metric_families(service_context& ctx);

} // namespace mg::services
