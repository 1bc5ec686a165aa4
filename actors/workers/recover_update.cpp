#include "actors/workers/recover_update.hpp"

#include "actors/workers/step_proof.hpp"
#include "domain/json.hpp"
#include "domain/provider_answer.hpp"

namespace mg::workers {

using domain::executor_step;
using domain::node_state;
using domain::recover_outcome;

domain::recover_result call_recover(const db::claimed_node& n, const domain::execution_context& ctx,
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

namespace {

/// call_recover put a protocol violation in place of the answer.
bool is_protocol_error(const domain::recover_result& rr) {
  return rr.result.error_code == domain::provider_protocol_error_code &&
         rr.result.next_state == node_state::unknown;
}

} // namespace

db::node_update recover_update(const db::claimed_node& n, const domain::recover_result& rr) {
  db::node_update u;
  auto& r = rr.result;
  if (is_protocol_error(rr)) {
    // UNKNOWN, settled at once: an operator must look (SPEC §4).
    u.next_state = node_state::unknown;
    db::take_provider_result(u, r);
    u.token = db::claim_token_change::rotate;
    return u;
  }
  switch (rr.outcome) {
  case recover_outcome::found:
    u.next_state = r.next_state.value_or(node_state::unknown);
    db::take_provider_result(u, r);
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

const char* recover_outcome_name(recover_outcome o) {
  return o == recover_outcome::found    ? "found"
         : o == recover_outcome::fenced ? "fenced"
                                        : "still_unknown";
}

void add_recover_artifacts(db::event_batch& events, const db::claimed_node& n,
                           const domain::recover_result& rr, node_state led_to) {
  events.add_artifact(
      {n.id, n.attempt_no, "recover_proof", recover_proof_json(rr.outcome, led_to, rr.result), ""});
  events.add_generated_artifacts(n.id, n.attempt_no, rr.result.generated_artifacts);
}

} // namespace mg::workers
