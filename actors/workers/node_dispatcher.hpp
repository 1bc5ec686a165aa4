#pragma once
// node_dispatcher pass (reference §1 + SPEC §1 write-ahead submit): claims
// one READY node, runs preflight → prepare → (sign), commits it SUBMITTING
// with a fresh claim token, submits outside any lock, and commits the
// result conditionally on (node, attempt, claim token).
#include <atomic>

#include "actors/workers/engine.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

/// `lane` numbers parallel dispatchers (0 for the first): each starts its
/// walk of the FIFO candidates at its own slot. Once `stopping` is set the
/// pass claims no successor along a chain (a SIGTERM drain claims nothing
/// new); what it already claimed is still submitted and committed.
pass_result dispatch_pass(db::connection_slot& conn, const engine& e, int lane = 0,
                          const std::atomic<bool>* stopping = nullptr);

} // namespace mg::workers
