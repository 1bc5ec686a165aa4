#pragma once
// node_observer pass (reference §2): an unlocked snapshot of due
// SUBMITTED/OBSERVING nodes, then a per-node claim (node + request, SKIP
// LOCKED, miss-only savepoint) held through observe and its commit.
#include "actors/workers/engine.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

pass_result observe_pass(db::connection_slot& conn, const engine& e);

} // namespace mg::workers
