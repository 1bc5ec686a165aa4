#pragma once
// api_nonces on the API pool: the replay protection of signed /v3 calls
// and of cluster logins (SPEC §5, §8), shared by both front doors.
#include <functional>
#include <string>

#include "persistence/connection_pool.hpp"

namespace mg::services {

/// Records (key_id, nonce): true when it is new, false for a replay. Only
/// when it was new is `prune_due` asked; when it says yes, nonces older
/// than api::nonce_keep_seconds are deleted on the same connection (a
/// failed prune is logged and left to the next one: the nonce itself is
/// committed). Throws when the database cannot answer; a broken connection
/// is dropped from the pool first.
bool remember_nonce(db::connection_pool& pool, const std::string& key_id, const std::string& nonce,
                    const std::function<bool()>& prune_due);

} // namespace mg::services
