#include "services/recovery.hpp"

#include "domain/provider_answer.hpp"
#include "domain/recovery.hpp"
#include "domain/step_proof.hpp"

namespace mg::services {

using domain::executor_step;
using domain::recover_outcome;

namespace {

domain::recover_result recover_answer(const db::claimed_node& n,
                                      const domain::execution_context& ctx,
                                      const domain::provider_registry& providers) {
  auto* executor = providers.find_executor(n.executor_key);
  try {
    if (!executor)
      throw domain::executor_error("no executor '" + n.executor_key + "'");
    auto rr = executor->recover(ctx);
    if (rr.outcome == recover_outcome::found)
      rr.result = domain::checked_answer(executor_step::recover, std::move(rr.result));
    return rr;
  } catch (const domain::provider_protocol_error& ex) {
    domain::recover_result r;
    r.outcome = recover_outcome::still_unknown;
    r.result = domain::protocol_violation(executor_step::recover, {}, ex.what());
    return r;
  } catch (const std::exception& ex) {
    domain::recover_result r;
    r.outcome = recover_outcome::still_unknown;
    r.result.error_detail = ex.what();
    return r;
  }
}

} // namespace

domain::recover_result call_recover(const db::claimed_node& n, const domain::execution_context& ctx,
                                    const domain::provider_registry& providers) {
  auto rr = recover_answer(n, ctx, providers);
  rr.result.answered_at = std::chrono::system_clock::now();
  return rr;
}

db::node_update recover_update(const db::claimed_node& n, const domain::recover_result& rr) {
  auto d = domain::decide_recover(rr, n.attempt_no, n.error_code);
  db::node_update u;
  u.next_state = d.next_state;
  if (d.take_answer) {
    db::take_provider_result(u, rr.result);
  } else {
    u.error_code = d.error_code;
    u.error_detail = d.error_detail;
  }
  if (d.observe_now)
    u.next_observe_in_seconds = 0;
  u.token = d.clear_claim ? db::claim_token_change::clear : db::claim_token_change::rotate;
  return u;
}

void add_recover_artifacts(db::event_batch& events, const db::claimed_node& n,
                           const domain::recover_result& rr, domain::node_state led_to) {
  events.add_artifact({n.id, n.attempt_no, "recover_proof",
                       domain::recover_proof_json(rr.outcome, led_to, rr.result), ""});
  events.add_generated_artifacts(n.id, n.attempt_no, rr.result.generated_artifacts);
}

} // namespace mg::services
