#include "actors/workers/node_result.hpp"

#include "persistence/movement_store.hpp"

namespace mg::workers {

result_written write_node_result(pqxx::transaction_base& tx, const db::claimed_node& n,
                                 const db::node_update& u, db::event_batch& events,
                                 const engine& e) {
  result_written out;
  out.effects = db::apply_node_update_and_flush(tx, n, u, events);
  if (out.effects.needs_reconcile)
    out.activated =
        db::reconcile_request(tx, e.plans, n.request_id, e.reconcile_settings()).activated;
  return out;
}

} // namespace mg::workers
