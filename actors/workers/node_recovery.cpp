#include "actors/workers/node_recovery.hpp"

#include "config/log.hpp"
#include "domain/json.hpp"
#include "persistence/context_loader.hpp"
#include "persistence/node_store.hpp"

namespace mg::workers {

using domain::node_state;
using domain::recover_outcome;

namespace {

domain::recover_result call_recover(const db::claimed_node& n, const domain::execution_context& ctx,
                                    const engine& e) {
  auto* executor = e.providers.find_executor(n.executor_key);
  try {
    if (!executor)
      throw domain::executor_error("no executor '" + n.executor_key + "'");
    return executor->recover(ctx);
  } catch (const std::exception& ex) {
    domain::recover_result r;
    r.outcome = recover_outcome::still_unknown;
    r.result.error_detail = ex.what();
    return r;
  }
}

/// Every write rotates (or clears) the claim token: a late result from the
/// attempt's dispatcher no longer matches and changes nothing.
db::node_update update_for(const db::claimed_node& n, const domain::recover_result& rr) {
  db::node_update u;
  auto& r = rr.result;
  switch (rr.outcome) {
  case recover_outcome::found:
    u.next_state = r.next_state.value_or(node_state::unknown);
    if (u.next_state == node_state::ready || u.next_state == node_state::blocked)
      u.next_state = node_state::unknown;
    u.provider_state = r.provider_state;
    u.provider_refs = r.provider_refs;
    if (!r.provider_ref_id.empty())
      u.provider_ref_id = r.provider_ref_id;
    u.error_code = r.error_code;
    u.error_detail = r.error_detail;
    if (u.next_state == node_state::submitted || u.next_state == node_state::observing)
      u.next_observe_in_seconds = 0; // back to the observer at once
    u.token = db::claim_token_change::rotate;
    break;
  case recover_outcome::fenced:
    u.next_state = node_state::ready;
    u.error_detail = "attempt " + std::to_string(n.attempt_no) + " fenced by recovery";
    u.token = db::claim_token_change::clear;
    break;
  case recover_outcome::still_unknown:
    u.next_state = node_state::unknown;
    u.error_code = n.error_code.empty() ? "RECOVERY_PENDING" : n.error_code;
    u.error_detail = r.error_detail;
    u.token = db::claim_token_change::rotate;
    break;
  }
  return u;
}

const char* outcome_name(recover_outcome o) {
  return o == recover_outcome::found    ? "found"
         : o == recover_outcome::fenced ? "fenced"
                                        : "still_unknown";
}

} // namespace

pass_result recovery_pass(db::connection_slot& conn, const engine& e, recovery_counts* counts) {
  pass_result out;
  pqxx::work tx(conn.get());
  db::recovery_limits limits{e.settings.node_recovery_batch_size,
                             e.settings.node_submitting_grace_seconds,
                             e.settings.unknown_escalate_seconds};
  auto claimed = db::claim_for_recovery(tx, e.settings.network_class, limits);
  for (auto& n : claimed) {
    auto stored = e.plans.get(tx, n.template_key, n.template_version);
    auto built = db::build_context(tx, n, *stored, n.attempt_no);
    built.ctx.idempotency_key = n.idempotency_key; // the attempt's own key
    auto rr = call_recover(n, built.ctx, e);
    db::event_batch events(n.request_id, e.settings.callback_max_attempts);
    auto u = update_for(n, rr);
    db::add_artifact(tx, n.id, n.attempt_no, "recover_proof",
                     "{\"outcome\":" + json::quote(outcome_name(rr.outcome)) +
                         ",\"next_state\":" + json::quote(domain::to_string(u.next_state)) + "}");
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
                                 {"outcome", outcome_name(rr.outcome)},
                                 {"to", domain::to_string(u.next_state)}});
  }
  tx.commit();
  return out;
}

} // namespace mg::workers
