#pragma once
// Asking an executor to recover a node's attempt and turning the answer
// into the node's conditional update (SPEC §1): shared by the node_recovery
// worker and the operator's retry of an UNKNOWN node, so both apply a
// recovery outcome the same way (the mapping itself is domain/recovery).
#include "domain/executor.hpp"
#include "persistence/node_store.hpp"

namespace mg::services {

/// Asks the node's executor to recover the attempt in `ctx`. A missing
/// executor or a failed call counts as still unknown; an answer recover may
/// not give (found READY or SKIPPED, a malformed document, …) becomes a
/// PROVIDER_PROTOCOL_ERROR result that recover_update settles UNKNOWN.
domain::recover_result call_recover(const db::claimed_node& n, const domain::execution_context& ctx,
                                    const domain::provider_registry& providers);

/// The conditional update for a recover answer. Every write rotates (or
/// clears) the claim token: a late result from the attempt's dispatcher no
/// longer matches and changes nothing.
db::node_update recover_update(const db::claimed_node& n, const domain::recover_result& rr);

/// Queues the recover_proof artifact (the answer and the state it led to)
/// and the answer's generated artifacts on `events` (reference: both saved).
void add_recover_artifacts(db::event_batch& events, const db::claimed_node& n,
                           const domain::recover_result& rr, domain::node_state led_to);

} // namespace mg::services
