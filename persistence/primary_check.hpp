#pragma once
// Whether a connection reaches the primary (what /readyz asks).
#include <pqxx/pqxx>

namespace mg::db {

/// True when the server behind `c` takes writes: the primary, not a standby
/// or a session forced read-only (what a failover leaves behind).
bool accepts_writes(pqxx::connection& c);

} // namespace mg::db
