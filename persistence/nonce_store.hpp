#pragma once
// api_nonces: replay protection for signed API calls (SPEC §5). Kept in
// PostgreSQL so a replay fails on any process and after a restart.
#include <pqxx/pqxx>
#include <string>

#include "domain/api_auth.hpp"

namespace mg::db {

/// Records (key_id, nonce) in its own committed transaction. True when it
/// is new, false when it was already there (a replay).
bool remember_nonce(pqxx::connection& c, const std::string& key_id, const std::string& nonce);

/// Deletes nonces seen more than `max_age_seconds` ago (SPEC: kept at least
/// 900 s); returns how many went.
long prune_nonces(pqxx::connection& c, int max_age_seconds = api::nonce_keep_seconds);

} // namespace mg::db
