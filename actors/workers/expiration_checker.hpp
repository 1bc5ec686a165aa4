#pragma once
// expiration_checker pass (reference §5): PENDING_APPROVAL requests past
// expires_at, at most MG_EXPIRATION_BATCH_SIZE (20, the reference) per pass
// (SKIP LOCKED, this network class), go EXPIRED with approval_status
// 'rejected' and a request_expired event.
#include "actors/workers/engine.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

pass_result expiration_pass(db::connection_slot& conn, const config::settings& s);

} // namespace mg::workers
