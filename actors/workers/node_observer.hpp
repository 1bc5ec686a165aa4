#pragma once
// node_observer pass (reference §2): an unlocked snapshot of due
// SUBMITTED/OBSERVING nodes, then a per-node claim (node + request, SKIP
// LOCKED, miss-only savepoint) held through observe and its commit.
#include "actors/workers/engine.hpp"
#include <memory>
#include <vector>

#include "persistence/connection_slot.hpp"

namespace mg::workers {

/// Extra connections for observing several nodes at once (reference:
/// "observe multiple nodes concurrently"); each observation keeps its own
/// transaction, so a slow provider holds only its own node's locks.
using helper_connections = std::vector<std::unique_ptr<db::connection_slot>>;

/// Observes up to the batch size of due nodes, on `conn` and, when given,
/// concurrently on the helper connections too.
pass_result observe_pass(db::connection_slot& conn, const engine& e,
                         helper_connections* helpers = nullptr);

} // namespace mg::workers
