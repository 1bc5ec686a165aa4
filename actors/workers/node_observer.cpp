#include "actors/workers/node_observer.hpp"

#include <exception>
#include <thread>

#include "actors/workers/step_proof.hpp"
#include "config/log.hpp"
#include "domain/json.hpp"
#include "domain/provider_answer.hpp"
#include "domain/timing.hpp"
#include "persistence/context_loader.hpp"
#include "persistence/node_store.hpp"

namespace mg::workers {

using domain::node_state;

namespace {

/// timeout_policy.observe_seconds, or 0 when absent.
double observe_seconds(const domain::plan& p, const std::string& node_key) {
  auto i = p.find(node_key);
  if (!i)
    return 0;
  auto policy = json::parse(p.nodes[*i].timeout_policy_json);
  if (!policy || !policy->IsObject() || !policy->HasMember("observe_seconds") ||
      !(*policy)["observe_seconds"].IsNumber())
    return 0;
  return (*policy)["observe_seconds"].GetDouble();
}

bool timed_out(const db::claimed_node& n, const db::stored_plan& stored, const engine& e) {
  if (!e.settings.observe_timeout_enforcement_enabled)
    return false;
  double limit = observe_seconds(stored.plan, n.node_key);
  return limit > 0 && n.seconds_since_started > limit;
}

db::node_update update_from(const db::claimed_node& n, const domain::step_result& r) {
  auto current = *domain::parse_node_state(n.node_state);
  db::node_update u;
  u.next_state = r.next_state.value_or(current);
  db::take_provider_result(u, r);
  u.observed = true;
  if (u.next_state == node_state::submitted || u.next_state == node_state::observing)
    u.next_observe_in_seconds = domain::observe_delay(n.action_type, r.retry_after_seconds);
  return u;
}

/// executor.observe, its answer checked (SPEC §4): a failed call keeps the
/// state (asked again after the usual interval); an answer observe may not
/// give — READY, SKIPPED, anything unknown, a malformed document — leaves
/// the node UNKNOWN with PROVIDER_PROTOCOL_ERROR, settled at once.
domain::step_result call_observe(const db::claimed_node& n, const domain::execution_context& ctx,
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

/// Observes one claimed node inside `tx` (the claim's transaction).
void observe_claimed(pqxx::work& tx, const db::claimed_node& n, const engine& e, pass_result& out) {
  db::event_batch events(n.request_id, e.settings.callback_max_attempts);
  auto stored = e.plans.get(tx, n.template_key, n.template_version);
  db::node_update u;
  if (timed_out(n, *stored, e)) {
    // A paging signal, never auto-recovered: no executor call.
    u.next_state = node_state::unknown;
    u.error_code = "OBSERVATION_TIMEOUT";
    u.error_detail = "observe_seconds exceeded";
  } else {
    auto built = db::build_context(tx, n, *stored, n.attempt_no);
    auto r = call_observe(n, built.ctx, e);
    u = update_from(n, r);
    events.add_artifact({n.id, n.attempt_no, "observe_proof", step_proof_json(r), ""});
    events.add_generated_artifacts(n.id, n.attempt_no, r.generated_artifacts);
  }
  auto fx = db::apply_node_update_and_flush(tx, n, u, events);
  if (fx.needs_reconcile)
    out.reconcile.push_back(n.request_id);
  if (u.next_observe_in_seconds && *u.next_observe_in_seconds == 0)
    out.wake_observer = true;
}

/// Claims, observes and commits each node of `ids` in its own transaction.
/// The claim is that transaction's first statement, so a miss ends the
/// transaction (releasing partial locks) without a savepoint.
void observe_each(db::connection_slot& conn, const engine& e, const std::vector<std::string>& ids,
                  pass_result& out) {
  for (auto& id : ids) {
    pqxx::work tx(conn.get());
    auto claimed = db::claim_for_observe(tx, id, e.settings.network_class,
                                         db::claim_scope::first_in_transaction);
    if (!claimed) {
      tx.commit();
      out.busy = true; // its request is busy: look again soon
      continue;
    }
    ++out.processed;
    try {
      observe_claimed(tx, *claimed, e, out);
      tx.commit();
    } catch (const db::stale_write& ex) {
      ++out.stale;
      log::warn("stale observation dropped", {{"node_id", id}, {"detail", ex.what()}});
    }
  }
}

void merge(pass_result& into, pass_result&& part) {
  into.processed += part.processed;
  into.stale += part.stale;
  into.wake_observer |= part.wake_observer;
  into.reconcile.insert(into.reconcile.end(), part.reconcile.begin(), part.reconcile.end());
  into.busy |= part.busy;
  if (part.next_due_in_seconds)
    into.next_due_in_seconds = part.next_due_in_seconds;
}

} // namespace

pass_result observe_pass(db::connection_slot& conn, const engine& e, helper_connections* helpers) {
  pass_result out;
  std::vector<std::string> ids;
  {
    pqxx::nontransaction snapshot(conn.get());
    ids = db::observe_candidates(snapshot, e.settings.network_class,
                                 e.settings.node_observe_batch_size);
    if (ids.empty() && e.settings.wakeups_enabled)
      out.next_due_in_seconds = db::next_observe_due_in(snapshot, e.settings.network_class);
  }
  size_t lanes = std::min(ids.size(), 1 + (helpers ? helpers->size() : 0));
  if (lanes <= 1) {
    observe_each(conn, e, ids, out);
    return out;
  }
  // Deal the candidates round-robin over the lanes; lane 0 runs here.
  std::vector<std::vector<std::string>> shares(lanes);
  for (size_t i = 0; i < ids.size(); ++i)
    shares[i % lanes].push_back(ids[i]);
  std::vector<pass_result> parts(lanes);
  std::vector<std::exception_ptr> errors(lanes);
  std::vector<std::thread> threads;
  for (size_t l = 1; l < lanes; ++l)
    threads.emplace_back([&, l] {
      try {
        observe_each(*(*helpers)[l - 1], e, shares[l], parts[l]);
      } catch (...) {
        errors[l] = std::current_exception();
        (*helpers)[l - 1]->reset();
      }
    });
  try {
    observe_each(conn, e, shares[0], parts[0]);
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (auto& t : threads)
    t.join();
  for (auto& p : parts)
    merge(out, std::move(p));
  for (auto& err : errors)
    if (err)
      std::rethrow_exception(err);
  return out;
}

} // namespace mg::workers
