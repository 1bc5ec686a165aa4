#include "services/health_service.hpp"

#include "config/log.hpp"
#include "persistence/heartbeat_view.hpp"
#include "persistence/primary_check.hpp"

namespace mg::services {

bool database_accepts_writes(db::connection_pool& pool) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      auto lease = pool.acquire();
      try {
        if (db::accepts_writes(*lease))
          return true;
      } catch (const std::exception&) {
        // a session the failover killed: replaced below like a read-only one
      }
      lease.discard();
    } catch (const std::exception&) {
      return false; // no server to connect to
    }
  }
  return false;
}

std::string worker_heartbeats_json(db::connection_pool& pool) {
  try {
    auto lease = pool.acquire();
    try {
      return db::worker_heartbeats_json(*lease);
    } catch (const std::exception&) {
      lease.discard();
      return "null";
    }
  } catch (const std::exception&) {
    return "null";
  }
}

std::optional<db::metrics_snapshot>
read_metrics(db::connection_pool& pool, const std::string& network_class, double lease_seconds) {
  try {
    auto lease = pool.acquire();
    try {
      return db::read_metrics(*lease, network_class, lease_seconds);
    } catch (const std::exception&) {
      lease.discard();
      throw;
    }
  } catch (const std::exception& e) {
    log::warn("metrics: database read failed", {{"error", e.what()}});
    return std::nullopt;
  }
}

} // namespace mg::services
