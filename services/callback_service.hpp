#pragma once
// The operator's calls on callback deliveries (SPEC §7, admin listener):
// list the outbox, put a sent or dead-lettered delivery back to pending.
// The front door checks the parameters first; a lost database answers 503.
#include <string>

#include "persistence/connection_pool.hpp"
#include "services/service_context.hpp"

namespace mg::services {

/// {"items", "next_cursor"} of `status` ("" = any, else pending|sent|dlq)
/// after the row `cursor` ("" = first page, else a UUID); 400 when the
/// cursor names no row.
reply list_callbacks(db::connection_pool& pool, const std::string& status, int limit,
                     const std::string& cursor);

/// The row back to pending, audited as `actor`; 404 for an unknown (or
/// malformed) id, 409 when it is pending already.
reply redeliver_callback(db::connection_pool& pool, const std::string& id,
                         const std::string& actor);

} // namespace mg::services
