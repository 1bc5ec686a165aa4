#include "actors/workers/node_recovery.hpp"

#include "config/log.hpp"
#include "domain/recovery.hpp"
#include "persistence/context_loader.hpp"
#include "persistence/node_store.hpp"
#include "services/recovery.hpp"

namespace mg::workers {

using domain::recover_outcome;

pass_result recovery_pass(db::connection_slot& conn, const engine& e, recovery_counts* counts) {
  pass_result out;
  pqxx::work tx(conn.get());
  db::recovery_limits limits{e.settings.node_recovery_batch_size,
                             e.settings.node_submitting_grace_seconds,
                             e.settings.unknown_escalate_seconds};
  auto claimed = db::claim_for_recovery(tx, e.settings.network_class, limits);
  // Woken for work (a cluster take-over) whose request a reconcile still
  // holds: look again shortly instead of after the full interval.
  if (claimed.empty()) {
    out.busy = db::recovery_work_waiting(tx, e.settings.network_class, limits);
    tx.abort(); // read only: nothing to commit
    return out;
  }
  for (auto& n : claimed) {
    auto stored = e.plans.get(tx, n.template_key, n.template_version);
    auto built = db::build_context(tx, n, *stored, n.attempt_no);
    built.ctx.idempotency_key = n.idempotency_key; // the attempt's own key
    auto rr = services::call_recover(n, built.ctx, e.providers);
    db::event_batch events(n.request_id, e.settings.callback_max_attempts);
    auto u = services::recover_update(n, rr);
    services::add_recover_artifacts(events, n, rr, u.next_state);
    auto fx = db::apply_node_update(tx, n, u, events);
    events.flush(tx);
    if (fx.needs_reconcile)
      out.reconcile.push_back(n.request_id);
    out.wake_observer |= u.next_observe_in_seconds.has_value();
    ++out.processed;
    if (counts)
      ++(rr.outcome == recover_outcome::found    ? counts->found
         : rr.outcome == recover_outcome::fenced ? counts->fenced
                                                 : counts->still_unknown);
    log::info("node recovered", {{"node_id", n.id},
                                 {"node_key", n.node_key},
                                 {"from", n.node_state},
                                 {"outcome", domain::recover_outcome_name(rr.outcome)},
                                 {"to", domain::to_string(u.next_state)}});
  }
  tx.commit();
  return out;
}

} // namespace mg::workers
