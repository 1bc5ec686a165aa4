#pragma once
// audit_outbox_promoter pass (reference §9): copies audit_outbox rows into
// audit_events exactly once (SKIP LOCKED batches, the outbox id as the
// event id) and marks them promoted.
#include "actors/workers/engine.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

inline constexpr int audit_promotion_batch = 100;

pass_result audit_promotion_pass(db::connection_slot& conn, int batch = audit_promotion_batch);

} // namespace mg::workers
