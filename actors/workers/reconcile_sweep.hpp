#pragma once
// The needs_reconcile sweep (SPEC §1): reconciles flagged requests whose
// movement actor died or never got the message, and requests whose UNKNOWN
// node has settled with time alone.
#include "actors/workers/engine.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

inline constexpr int reconcile_sweep_batch = 50;

/// Reconciles up to reconcile_sweep_batch candidates in one transaction
/// (the request writer's, workers::write_results).
pass_result reconcile_sweep_pass(db::connection_slot& conn, const engine& e);

} // namespace mg::workers
