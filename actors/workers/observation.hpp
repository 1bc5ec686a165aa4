#pragma once
// One executor.observe call and the node update it makes: shared by the
// observer and the dispatcher's inline first observation (SPEC §1), so
// both write the same rows.
#include "actors/workers/engine.hpp"
#include "domain/executor.hpp"
#include "persistence/node_store.hpp"

namespace mg::workers {

/// executor.observe, its answer checked (SPEC §4): a failed call keeps the
/// state (asked again after the usual interval); an answer observe may not
/// give — READY, SKIPPED, anything unknown, a malformed document — leaves
/// the node UNKNOWN with PROVIDER_PROTOCOL_ERROR, settled at once.
domain::step_result call_observe(const db::claimed_node& n, const domain::execution_context& ctx,
                                 const engine& e);

/// The update an observation `r` of `n` makes (observe_count + 1).
db::node_update observation_update(const db::claimed_node& n, const domain::step_result& r);

/// Adds the observation's proof and generated artifacts to `events`.
void add_observation_artifacts(db::event_batch& events, const db::claimed_node& n,
                               const domain::step_result& r);

} // namespace mg::workers
