#include "services/nonce_service.hpp"

#include "config/log.hpp"
#include "persistence/db.hpp"
#include "persistence/nonce_store.hpp"

namespace mg::services {

namespace {

void prune(db::connection_pool::lease& lease) {
  try {
    long gone = db::prune_nonces(*lease, api::nonce_keep_seconds);
    log::debug("pruned api nonces", {{"deleted", gone}});
  } catch (const std::exception& e) {
    if (db::is_connection_error(e) || !lease->is_open())
      lease.discard();
    log::warn("pruning api nonces failed", {{"error", e.what()}});
  }
}

} // namespace

bool remember_nonce(db::connection_pool& pool, const std::string& key_id, const std::string& nonce,
                    const std::function<bool()>& prune_due) {
  auto lease = pool.acquire();
  bool fresh = false;
  try {
    fresh = db::remember_nonce(*lease, key_id, nonce);
  } catch (const std::exception& e) {
    if (db::is_connection_error(e) || !lease->is_open())
      lease.discard();
    throw;
  }
  if (fresh && prune_due && prune_due())
    prune(lease);
  return fresh;
}

} // namespace mg::services
