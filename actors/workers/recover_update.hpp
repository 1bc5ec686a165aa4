#pragma once
// How an executor.recover answer becomes a node update (SPEC §1): shared by
// the node_recovery worker and the operator's retry of an UNKNOWN node, so
// both apply a recovery outcome the same way.
#include "domain/executor.hpp"
#include "persistence/node_store.hpp"

namespace mg::workers {

/// Asks the node's executor to recover the attempt in `ctx`. A missing
/// executor or a failed call counts as still unknown.
domain::recover_result call_recover(const db::claimed_node& n, const domain::execution_context& ctx,
                                    const domain::provider_registry& providers);

/// The conditional update for a recover answer. Every write rotates (or
/// clears) the claim token: a late result from the attempt's dispatcher no
/// longer matches and changes nothing.
db::node_update recover_update(const db::claimed_node& n, const domain::recover_result& rr);

const char* recover_outcome_name(domain::recover_outcome o);

/// The recover_proof artifact payload for an answer and the state it led to.
std::string recover_proof_json(domain::recover_outcome o, domain::node_state next);

} // namespace mg::workers
