#pragma once
// The needs_reconcile sweep (SPEC §1): reconciles flagged requests whose
// movement actor died or never got the message, and requests whose UNKNOWN
// node has settled with time alone.
#include "actors/workers/engine.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

inline constexpr int reconcile_sweep_batch = 50;

pass_result reconcile_sweep_pass(db::connection_slot& conn, const engine& e);

/// Commits a reconcile's transaction when it wrote something, else rolls it
/// back (it only held locks).
void end_reconcile(pqxx::work& tx, const db::reconcile_outcome& outcome);

/// One request, in its own transaction (the movement actor's unit of work);
/// rolled back when the reconcile wrote nothing.
db::reconcile_outcome reconcile_one(pqxx::connection& conn, const engine& e,
                                    const std::string& request_id);

} // namespace mg::workers
