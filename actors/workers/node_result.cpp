#include "actors/workers/node_result.hpp"

#include "persistence/movement_store.hpp"

namespace mg::workers {

result_written write_node_result(pqxx::transaction_base& tx, const db::claimed_node& n,
                                 const db::node_update& u, db::event_batch& events, const engine& e,
                                 db::shared_write shared) {
  result_written out;
  shared.reconciled_here = true;
  out.effects = db::apply_node_update_and_flush(tx, n, u, events, shared);
  if (!out.effects.needs_reconcile)
    return out;
  auto reconciled =
      db::reconcile_request(tx, e.plans, n.request_id, e.reconcile_settings(), shared.events);
  out.activated = reconciled.activated;
  out.activated_keys = std::move(reconciled.activated_keys);
  return out;
}

} // namespace mg::workers
