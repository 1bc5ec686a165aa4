#include "actors/workers/observation.hpp"

#include "config/log.hpp"
#include "domain/provider_answer.hpp"
#include "domain/step_proof.hpp"
#include "domain/timing.hpp"

namespace mg::workers {

using domain::node_state;

namespace {

domain::step_result observe_answer(const db::claimed_node& n, const domain::execution_context& ctx,
                                   const engine& e) {
  using domain::executor_step;
  auto* executor = e.providers.find_executor(n.executor_key);
  try {
    if (!executor)
      throw domain::executor_error("no executor '" + n.executor_key + "'");
    return domain::checked_answer(executor_step::observe, executor->observe(ctx));
  } catch (const domain::provider_protocol_error& ex) {
    log::warn("observe answer refused", {{"node_id", n.id}, {"detail", ex.what()}});
    return domain::protocol_violation(executor_step::observe, {}, ex.what());
  } catch (const std::exception& ex) {
    log::warn("observe failed", {{"node_id", n.id}, {"detail", ex.what()}});
    domain::step_result r;
    r.error_detail = ex.what();
    return r;
  }
}

} // namespace

domain::step_result call_observe(const db::claimed_node& n, const domain::execution_context& ctx,
                                 const engine& e) {
  auto answer = observe_answer(n, ctx, e);
  answer.answered_at = std::chrono::system_clock::now();
  return answer;
}

db::node_update observation_update(const db::claimed_node& n, const domain::step_result& r) {
  db::node_update u;
  u.next_state = r.next_state.value_or(n.node_state);
  db::take_provider_result(u, r);
  u.observed = true;
  if (u.next_state == node_state::submitted || u.next_state == node_state::observing)
    u.next_observe_in_seconds = domain::observe_delay(n.action_type, r.retry_after_seconds);
  return u;
}

void add_observation_artifacts(db::event_batch& events, const db::claimed_node& n,
                               const domain::step_result& r) {
  events.add_artifact({n.id, n.attempt_no, "observe_proof", step_proof_json(r), ""});
  events.add_generated_artifacts(n.id, n.attempt_no, r.generated_artifacts);
}

} // namespace mg::workers
