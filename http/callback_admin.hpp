#pragma once
// Operator routes for the callback outbox on the admin listener (SPEC §5):
//   GET  /admin/callbacks?status=pending|sent|dlq&limit=1..200&cursor=<id>
//        → {"items": [row…], "next_cursor": id|null}, oldest first
//   POST /admin/callbacks/{id}/redeliver
//        → 200 with the row, back to pending with attempts 0 and the same
//          event id, timestamp, nonce and body; 404 unknown id or not a
//          UUID; 409 when the row is already pending.
// A row: id, event_id, request_id, event_type, status, attempts,
// max_attempts, next_attempt_at, last_error, created_at, sent_at.
#include <vector>

#include "http/admin_server.hpp"
#include "services/service_context.hpp"

namespace mg::http {

std::vector<admin_route> callback_admin_routes(services::service_context& ctx);

} // namespace mg::http
