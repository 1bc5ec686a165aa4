#include "actors/workers/node_dispatcher.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "actors/metrics.hpp"
#include "actors/workers/cctp_caller_check.hpp"
#include "actors/workers/node_result.hpp"
#include "actors/workers/step_proof.hpp"
#include "config/log.hpp"
#include "domain/cctp_caller.hpp"
#include "domain/evm_transfer_plan.hpp"
#include "domain/json.hpp"
#include "domain/json_writer.hpp"
#include "domain/provider_answer.hpp"
#include "domain/signing_policy.hpp"
#include "domain/timing.hpp"
#include "persistence/claim_store.hpp"
#include "persistence/context_loader.hpp"
#include "persistence/db.hpp"
#include "persistence/evm_nonce_store.hpp"
#include "persistence/node_store.hpp"

namespace mg::workers {

using domain::node_state;

namespace {

constexpr int candidate_window = 8;

/// Everything the submit step needs once the claim transaction committed.
struct ready_to_submit {
  db::claimed_node node; // as committed: SUBMITTING, new attempt and token
  domain::execution_context ctx;
  domain::prepared_action action;
  std::optional<domain::sign_result> signature;
  domain::executor* executor = nullptr;
  // When the latest predecessor settled (steady clock), for the hop metric.
  std::optional<std::chrono::steady_clock::time_point> predecessors_done;
};

/// Ends the claim with a transition other than SUBMITTING (FAILED, or
/// whatever preflight decided).
void settle_in_claim(pqxx::work& tx, const db::claimed_node& n, node_state next,
                     const std::string& error_code, const std::string& detail,
                     db::event_batch& events, pass_result& out) {
  db::node_update u;
  u.next_state = next;
  u.error_code = error_code;
  u.error_detail = detail;
  auto fx = db::apply_node_update(tx, n, u, events);
  if (fx.needs_reconcile)
    out.reconcile.push_back(n.request_id);
  log::info("node settled at dispatch", {{"node_id", n.id},
                                         {"node_key", n.node_key},
                                         {"state", domain::to_string(next)},
                                         {"error_code", error_code},
                                         {"detail", detail}});
}

void mark_executing(pqxx::work& tx, db::claimed_node& n, db::event_batch& events) {
  if (n.request_state != "APPROVED")
    return;
  db::mark_request_executing(tx, n.request_id);
  n.request_state = "EXECUTING";
  events.add({"request_executing", "EXECUTING", "", "", "{}"});
}

std::string sign_result_json(const domain::sign_result& s) {
  json::writer w;
  w.begin_object()
      .member("signature", s.signature)
      .member("signer_address", s.signer_address)
      .end_object();
  return w.str();
}

/// SPEC §4: the engine decides what may be signed. Reads the attempt's EVM
/// nonce reservation (committed by the executor's prepare) and checks the
/// prepared payload against the node's config and intent.
domain::signing_verdict check_signing_policy(pqxx::work& tx, const domain::execution_context& ctx,
                                             const domain::prepared_action& action) {
  std::optional<domain::nonce_reservation> reserved;
  if (domain::is_evm_transfer(ctx.action_type))
    if (auto r = db::find_reservation(tx, ctx.idempotency_key); r && r->state == "reserved")
      reserved = domain::nonce_reservation{r->sender.chain_id, r->nonce};
  return domain::check_signing_policy(ctx, action, reserved);
}

/// Tells the executor its prepared action will never be submitted; a
/// failure to release is only logged (its reaper catches up later).
void release_prepared(domain::executor& executor, const domain::execution_context& ctx,
                      const domain::prepared_action& action) {
  try {
    executor.abandon(ctx, action);
  } catch (const std::exception& ex) {
    log::warn("executor could not release an abandoned prepare",
              {{"node_id", ctx.request_node_id}, {"error", ex.what()}});
  }
}

/// How one provider step before SUBMITTING ended.
enum class pre_submit {
  go_on,    // next step
  settled,  // the node left READY (FAILED, or what preflight decided)
  deferred, // the node stays READY, to be claimed again after its retry delay
};

/// SPEC §1 "preflight/prepare errors": an executor exception is a failed
/// call, not an answer — the node stays READY and is tried again after a
/// delay doubling from 1 s to 60 s, so no pass spins on it; the
/// MG_NODE_MAX_PREPARE_ERRORS'th in a row fails it with that error.
pre_submit on_prepare_error(pqxx::work& tx, const db::claimed_node& n, const std::string& code,
                            const std::string& detail, const engine& e, db::event_batch& events,
                            pass_result& out) {
  const int errors = n.prepare_errors + 1;
  if (errors >= e.settings.node_max_prepare_errors) {
    settle_in_claim(tx, n, node_state::failed, code, detail, events, out);
    return pre_submit::settled;
  }
  const double delay = domain::prepare_retry_delay(errors);
  db::defer_after_prepare_error(tx, n, code, detail, delay);
  log::warn("executor call failed before submit; node stays READY", {{"node_id", n.id},
                                                                     {"node_key", n.node_key},
                                                                     {"error_code", code},
                                                                     {"detail", detail},
                                                                     {"errors_in_a_row", errors},
                                                                     {"retry_in_seconds", delay}});
  return pre_submit::deferred;
}

/// A provider answered something the protocol does not allow before
/// anything went out: the node FAILS with PROVIDER_PROTOCOL_ERROR (SPEC §4).
pre_submit on_protocol_error(pqxx::work& tx, const db::claimed_node& n, const std::string& detail,
                             db::event_batch& events, pass_result& out) {
  settle_in_claim(tx, n, node_state::failed, domain::provider_protocol_error_code, detail, events,
                  out);
  return pre_submit::settled;
}

/// The CCTP burn caller-alignment check, then executor.preflight.
pre_submit run_preflight(pqxx::work& tx, const db::claimed_node& n, const db::stored_plan& stored,
                         ready_to_submit& r, const engine& e, db::event_batch& events,
                         pass_result& out) {
  std::optional<domain::step_result> verdict;
  try {
    // Reference: the burn check comes first and fails like a preflight.
    if (auto why = cctp_burn_caller_problem(tx, n, stored.plan, r.ctx.node_config, e.providers)) {
      settle_in_claim(tx, n, node_state::failed, domain::cctp_caller_mismatch_code, *why, events,
                      out);
      return pre_submit::settled;
    }
    verdict = r.executor->preflight(r.ctx);
  } catch (const pqxx::failure&) {
    throw; // the database, not the provider: the pass fails as it would anyway
  } catch (const domain::provider_protocol_error& ex) {
    return on_protocol_error(tx, n, ex.what(), events, out);
  } catch (const std::exception& ex) {
    return on_prepare_error(tx, n, "PREFLIGHT_ERROR", ex.what(), e, events, out);
  }
  if (!verdict)
    return pre_submit::go_on;
  if (auto problem = domain::answer_problem(domain::executor_step::preflight, *verdict);
      !problem.empty())
    return on_protocol_error(tx, n, problem, events, out);
  settle_in_claim(tx, n, verdict->next_state.value_or(node_state::failed), verdict->error_code,
                  verdict->error_detail, events, out);
  return pre_submit::settled;
}

pre_submit run_prepare(pqxx::work& tx, const db::claimed_node& n, ready_to_submit& r,
                       const engine& e, db::event_batch& events, pass_result& out) {
  try {
    auto action = r.executor->prepare(r.ctx);
    if (!action) {
      settle_in_claim(tx, n, node_state::failed, "PREPARE_EMPTY", "executor prepared no action",
                      events, out);
      return pre_submit::settled;
    }
    r.action = std::move(*action);
    return pre_submit::go_on;
  } catch (const domain::provider_protocol_error& ex) {
    return on_protocol_error(tx, n, ex.what(), events, out);
  } catch (const std::exception& ex) {
    return on_prepare_error(tx, n, "PREPARE_ERROR", ex.what(), e, events, out);
  }
}

/// How a claim transaction ended.
struct claim_end {
  std::optional<ready_to_submit> submit; // SUBMITTING committed: submit this
  bool deferred = false;                 // still READY, waiting out its retry delay
};

/// The claim transaction: everything up to the SUBMITTING commit.
claim_end run_claim(pqxx::work& tx, db::claimed_node n, const engine& e, db::event_batch& events,
                    pass_result& out) {
  const auto claimed_at = std::chrono::steady_clock::now();
  mark_executing(tx, n, events);
  auto fail = [&](const std::string& code, const std::string& detail) {
    settle_in_claim(tx, n, node_state::failed, code, detail, events, out);
    return claim_end{};
  };
  if (n.attempt_no >= e.settings.node_max_attempts)
    return fail("MAX_ATTEMPTS", "attempt " + std::to_string(n.attempt_no + 1) + " would exceed " +
                                    std::to_string(e.settings.node_max_attempts));
  auto stored = e.plans.get(tx, n.template_key, n.template_version);
  if (stored->graph_hash != n.compiled_plan_hash)
    return fail("PLAN_HASH_DRIFT", "template hash no longer matches the request's plan hash");
  auto built = db::build_context(tx, n, *stored, n.attempt_no + 1);
  if (!built.ok)
    return fail(built.error_code, built.error_detail);
  auto* executor = e.providers.find_executor(n.executor_key);
  if (!executor)
    return fail("EXECUTOR_NOT_FOUND", "no executor '" + n.executor_key + "'");

  n.node_state = "PREPARING"; // lives only inside this transaction
  ready_to_submit r{n, std::move(built.ctx), {}, std::nullopt, executor, std::nullopt};
  if (n.seconds_since_predecessors >= 0)
    r.predecessors_done =
        claimed_at - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(n.seconds_since_predecessors));
  auto how = run_preflight(tx, n, *stored, r, e, events, out);
  if (how == pre_submit::go_on)
    how = run_prepare(tx, n, r, e, events, out);
  if (how != pre_submit::go_on)
    return claim_end{std::nullopt, how == pre_submit::deferred};
  // From here a refusal also gives back what prepare reserved.
  auto abandon = [&](const std::string& code, const std::string& detail) {
    release_prepared(*executor, r.ctx, r.action);
    return fail(code, detail);
  };
  const int attempt = n.attempt_no + 1;
  json::writer prepared;
  prepared.begin_object()
      .member("action_type", r.action.action_type)
      .member("payload_format", r.action.payload_format)
      .member("payload", r.action.payload)
      .end_object();
  events.add_artifact({n.id, attempt, "prepared_action", prepared.str(), r.action.payload_hash});
  if (n.signing_required) {
    n.node_state = "AWAITING_SIGNATURE";
    if (n.signer_key.empty())
      return abandon("NO_SIGNER_BINDING", "node requires signing but names no signer");
    auto* signer = e.providers.find_signer(n.signer_key);
    if (!signer)
      return abandon("SIGNER_NOT_FOUND", "no signer '" + n.signer_key + "'");
    auto policy = check_signing_policy(tx, r.ctx, r.action);
    if (!policy.allowed)
      return abandon(domain::signing_policy_mismatch, policy.detail);
    try {
      r.signature =
          signer->sign(domain::build_sign_request(r.ctx, r.action, policy.allowed_payload_hash));
    } catch (const domain::provider_protocol_error& ex) {
      return abandon(domain::provider_protocol_error_code, ex.what());
    } catch (const std::exception& ex) {
      return abandon("SIGNING_FAILED", ex.what());
    }
    events.add_artifact({n.id, attempt, "sign_result", sign_result_json(*r.signature), ""});
  }
  events.node_changed(n.request_state, n.node_key, "SUBMITTING");
  // The claim's writes go in one round trip: events and artifacts, then the
  // SUBMITTING row, whose claim token is the batch's answer.
  db::write_batch batch;
  events.flush_into(tx, batch);
  db::add_submitting(tx, batch, {n.id, attempt, r.ctx.idempotency_key, e.settings.runtime_node});
  auto rows = batch.run(tx);
  if (rows.empty())
    throw std::logic_error("claimed node " + n.id + " was not READY");
  auto row = rows[0];
  r.node.node_state = "SUBMITTING";
  r.node.attempt_no = attempt;
  r.node.claim_token = row[0].c_str();
  r.node.idempotency_key = r.ctx.idempotency_key;
  return claim_end{std::move(r)};
}

/// executor.submit, its answer checked (SPEC §4): one it may not give
/// leaves the node UNKNOWN with PROVIDER_PROTOCOL_ERROR, settled at once.
domain::step_result call_submit(const ready_to_submit& r) {
  using domain::executor_step;
  try {
    auto result = r.executor->submit(r.ctx, r.action, r.signature ? &*r.signature : nullptr);
    if (!result.next_state)
      result.next_state = node_state::unknown; // no answer is "we do not know"
    return domain::checked_answer(executor_step::submit, std::move(result));
  } catch (const domain::provider_protocol_error& ex) {
    return domain::protocol_violation(executor_step::submit, {}, ex.what());
  } catch (const std::exception& ex) {
    // We asked and do not know the answer: recovery finds out.
    domain::step_result unknown;
    unknown.next_state = node_state::unknown;
    unknown.error_code = "SUBMIT_ERROR";
    unknown.error_detail = ex.what();
    return unknown;
  }
}

void commit_submit_result(pqxx::connection& c, const ready_to_submit& r,
                          const domain::step_result& s, const engine& e, pass_result& out) {
  pqxx::work tx(c);
  db::event_batch events(r.node.request_id, e.settings.callback_max_attempts);
  db::node_update u;
  u.next_state = *s.next_state;
  db::take_provider_result(u, s);
  if (u.next_state == node_state::submitted || u.next_state == node_state::observing)
    u.next_observe_in_seconds = domain::observe_delay(r.node.action_type, s.retry_after_seconds);
  events.add_artifact({r.node.id, r.node.attempt_no, "submit_proof", step_proof_json(s), ""});
  events.add_generated_artifacts(r.node.id, r.node.attempt_no, s.generated_artifacts);
  auto written = write_node_result(tx, r.node, u, events, e);
  tx.commit();
  out.activated += written.activated;
  out.wake_observer |=
      u.next_state == node_state::submitted || u.next_state == node_state::observing;
}

/// SPEC §1: a result commit that fails on a lost connection is retried
/// after reconnecting (and one rolled back by a deadlock at once), still
/// conditional on the claim token. If the
/// database stays away, recovery finds the SUBMITTING node after its grace.
void commit_with_retry(db::connection_slot& conn, const ready_to_submit& r,
                       const domain::step_result& s, const engine& e, pass_result& out) {
  constexpr int attempts = 30;
  for (int i = 1;; ++i) {
    try {
      commit_submit_result(conn.get(), r, s, e, out);
      return;
    } catch (const db::stale_write& ex) {
      ++out.stale;
      log::warn("stale submit result dropped", {{"node_id", r.node.id}, {"detail", ex.what()}});
      return;
    } catch (const pqxx::transaction_rollback& ex) {
      // Deadlock or serialization failure: nothing was written; try again.
      if (i == attempts)
        throw;
      log::warn("submit result commit rolled back; retrying",
                {{"node_id", r.node.id}, {"try", i}, {"error", ex.what()}});
    } catch (const std::exception& ex) {
      if (!db::is_connection_error(ex) || i == attempts)
        throw;
      conn.reset();
      log::warn("submit result commit lost its connection; retrying",
                {{"node_id", r.node.id}, {"try", i}});
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
}

/// Walks the unlocked FIFO candidates and claims the first free one. Each
/// claim is the first statement of its own transaction: a miss rolls that
/// transaction back (releasing the skipped attempt's partial locks, as the
/// reference's miss-only savepoint does) and a hit goes on in it, so a hit
/// costs no SAVEPOINT/RELEASE round trips. Returns the node to submit, if
/// the claim ended in SUBMITTING.
std::optional<ready_to_submit> claim_and_prepare(db::connection_slot& conn, const engine& e,
                                                 int lane, pass_result& out) {
  const auto& network_class = e.settings.network_class;
  std::vector<std::string> tried; // missed or deferred in this pass
  size_t deferred = 0;
  for (;;) {
    std::vector<std::string> ids;
    {
      pqxx::nontransaction list(conn.get());
      ids = db::dispatch_candidates(list, network_class, tried, candidate_window);
    }
    const size_t listed = ids.size();
    // Parallel dispatchers list the same FIFO head: each starts its walk at
    // its own slot, so they do not all race for the oldest node and pay a
    // miss each. The walk still covers every listed candidate.
    if (tried.empty() && listed > 0)
      std::rotate(ids.begin(), ids.begin() + lane % listed, ids.end());
    for (auto& id : ids) {
      pqxx::work tx(conn.get());
      auto claimed =
          db::claim_for_dispatch(tx, id, network_class, db::claim_scope::first_in_transaction);
      if (!claimed) {
        tx.abort();
        tried.push_back(id);
        continue;
      }
      out.processed = 1;
      db::event_batch events(claimed->request_id, e.settings.callback_max_attempts);
      if (claimed->has_callback)
        events.set_has_callback(*claimed->has_callback);
      auto end = run_claim(tx, *claimed, e, events, out);
      events.flush(tx);
      tx.commit();
      if (end.deferred) {
        // Nothing was done for it: the nodes behind it are not held up.
        tried.push_back(id);
        ++deferred;
        continue;
      }
      return std::move(end.submit);
    }
    if (static_cast<int>(listed) < candidate_window) {
      // Work exists but its rows are busy (observer or reconcile hold the
      // request): look again shortly instead of after a full interval.
      if (tried.size() > deferred)
        out.busy = true;
      return std::nullopt;
    }
  }
}

/// The hop (the bench's definition, as the engine sees it): the latest
/// predecessor settled → its successor's submit accepted. Observed once per
/// accepted submit, so a scrape costs nothing for it.
metrics::histogram& hop_histogram() {
  static auto& h = metrics::registry::global().get_histogram(
      "movegate_hop_latency_seconds",
      "Latest predecessor settled to the successor's submit accepted.",
      metrics::duration_buckets());
  return h;
}

void record_hop(const ready_to_submit& r, const domain::step_result& s) {
  if (!r.predecessors_done || !s.next_state)
    return;
  auto next = *s.next_state;
  if (next != node_state::submitted && next != node_state::observing &&
      next != node_state::completed)
    return;
  hop_histogram().observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - *r.predecessors_done)
          .count());
}

} // namespace

pass_result dispatch_pass(db::connection_slot& conn, const engine& e, int lane) {
  pass_result out;
  hop_histogram(); // exported (empty) before the first hop
  auto submit = claim_and_prepare(conn, e, lane, out);
  if (!submit)
    return out;
  auto result = call_submit(*submit);
  if (result.error_code == domain::fenced_error_code) {
    ++out.stale;
    log::warn("submit refused: attempt was fenced by recovery", {{"node_id", submit->node.id}});
    return out;
  }
  record_hop(*submit, result);
  commit_with_retry(conn, *submit, result, e, out);
  return out;
}

} // namespace mg::workers
