#include "actors/workers/node_recovery.hpp"

#include "actors/workers/node_result.hpp"

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
  // Every claimed node's context is read under the claim, which then ends:
  // no lock is held across the executor calls.
  std::vector<domain::execution_context> contexts;
  for (auto& n : claimed) {
    auto stored = e.plans.get(tx, n.template_key, n.template_version);
    contexts.push_back(db::build_context(tx, n, *stored, n.attempt_no).ctx);
    contexts.back().idempotency_key = n.idempotency_key; // the attempt's own key
  }
  tx.abort();
  std::vector<std::shared_ptr<handed_result>> results;
  for (size_t i = 0; i < claimed.size(); ++i) {
    auto& n = claimed[i];
    auto rr = services::call_recover(n, contexts[i], e.providers);
    auto result = std::make_shared<handed_result>(
        handed_result{n, services::recover_update(n, rr),
                      db::event_batch(n.request_id, e.settings.callback_max_attempts)});
    auto& u = result->update;
    services::add_recover_artifacts(result->events, n, rr, u.next_state);
    out.wake_observer |= u.next_observe_in_seconds.has_value();
    ++out.processed;
    if (counts)
      ++(rr.outcome == recover_outcome::found    ? counts->found
         : rr.outcome == recover_outcome::fenced ? counts->fenced
                                                 : counts->still_unknown);
    log::info("node recovered", {{"node_id", n.id},
                                 {"node_key", n.node_key},
                                 {"from", domain::to_string(n.node_state)},
                                 {"outcome", domain::recover_outcome_name(rr.outcome)},
                                 {"to", domain::to_string(u.next_state)}});
    results.push_back(std::move(result));
  }
  hand_over_results(conn.get(), e, results, out);
  return out;
}

} // namespace mg::workers
