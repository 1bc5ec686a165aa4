#include "actors/workers/recover_update.hpp"

#include "domain/json.hpp"

namespace mg::workers {

using domain::node_state;
using domain::recover_outcome;

domain::recover_result call_recover(const db::claimed_node& n, const domain::execution_context& ctx,
                                    const domain::provider_registry& providers) {
  auto* executor = providers.find_executor(n.executor_key);
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

db::node_update recover_update(const db::claimed_node& n, const domain::recover_result& rr) {
  db::node_update u;
  auto& r = rr.result;
  switch (rr.outcome) {
  case recover_outcome::found:
    u.next_state = r.next_state.value_or(node_state::unknown);
    if (u.next_state == node_state::ready || u.next_state == node_state::blocked)
      u.next_state = node_state::unknown;
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

std::string recover_proof_json(recover_outcome o, node_state next) {
  return "{\"outcome\":" + json::quote(recover_outcome_name(o)) +
         ",\"next_state\":" + json::quote(domain::to_string(next)) + "}";
}

} // namespace mg::workers
