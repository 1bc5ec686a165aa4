#pragma once
// A node's result and its request's reconcile, written in one transaction.
#include "actors/workers/engine.hpp"
#include "persistence/node_store.hpp"

namespace mg::workers {

struct result_written {
  db::update_effects effects;
  int activated = 0; // successors the reconcile made READY
  std::vector<std::string> activated_keys;
};

/// Applies `u` to `n` (conditional on its claim: throws db::stale_write)
/// with `events`, and, when the change matters to the request, reconciles
/// the request in the same transaction. The write has locked the request
/// row already (lock order: request, then nodes), so the reconcile runs on
/// current locked rows and the successors' activation commits with the
/// result that caused it, not in a transaction of its own. `shared` says
/// what the write may share with the transaction's other results.
result_written write_node_result(pqxx::transaction_base& tx, const db::claimed_node& n,
                                 const db::node_update& u, db::event_batch& events, const engine& e,
                                 db::shared_write shared = {});

} // namespace mg::workers
