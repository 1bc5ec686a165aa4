#include "actors/workers/node_claim.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "actors/workers/cctp_caller_check.hpp"
#include "config/log.hpp"
#include "domain/cctp_caller.hpp"
#include "domain/evm_transfer_plan.hpp"
#include "domain/json_writer.hpp"
#include "domain/provider_answer.hpp"
#include "domain/signing_policy.hpp"
#include "domain/timing.hpp"
#include "persistence/claim_store.hpp"
#include "persistence/context_loader.hpp"
#include "persistence/evm_nonce_store.hpp"
#include "persistence/movement_store.hpp"

namespace mg::workers {

using domain::node_state;

namespace {

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

/// The first dispatch of a request's node makes it EXECUTING; the row is
/// written with the claim transaction's other writes (write_claims).
void mark_executing(db::claimed_node& n, db::event_batch& events,
                    std::vector<std::string>& first_dispatch) {
  if (n.request_state != domain::request_state::approved)
    return;
  first_dispatch.push_back(n.request_id);
  n.request_state = domain::request_state::executing;
  events.add({"request_executing", domain::request_state::executing, "", std::nullopt, "{}"});
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

/// What a claim reads before it writes anything: the plan, the attempt's
/// context and the executor, or why the node cannot be dispatched.
struct claim_inputs {
  std::shared_ptr<const db::stored_plan> stored;
  domain::execution_context ctx;
  domain::executor* executor = nullptr;
  std::string error_code; // set: the node FAILS with it at this claim
  std::string error_detail;
};

/// With `prefetched`, the context read for the node with others (see
/// prefetch_contexts); without, it is read here.
claim_inputs read_claim_inputs(pqxx::work& tx, const db::claimed_node& n, const engine& e,
                               db::context_result* prefetched) {
  claim_inputs in;
  auto refuse = [&](std::string code, std::string detail) {
    in.error_code = std::move(code);
    in.error_detail = std::move(detail);
    return std::move(in);
  };
  if (n.attempt_no >= e.settings.node_max_attempts)
    return refuse("MAX_ATTEMPTS", "attempt " + std::to_string(n.attempt_no + 1) + " would exceed " +
                                      std::to_string(e.settings.node_max_attempts));
  in.stored = e.plans.get(tx, n.template_key, n.template_version);
  if (in.stored->graph_hash != n.compiled_plan_hash)
    return refuse("PLAN_HASH_DRIFT", "template hash no longer matches the request's plan hash");
  auto built =
      prefetched ? std::move(*prefetched) : db::build_context(tx, n, *in.stored, n.attempt_no + 1);
  if (!built.ok)
    return refuse(built.error_code, built.error_detail);
  in.ctx = std::move(built.ctx);
  in.executor = e.providers.find_executor(n.executor_key);
  if (!in.executor)
    return refuse("EXECUTOR_NOT_FOUND", "no executor '" + n.executor_key + "'");
  return in;
}

/// SPEC §1 batched claims: the executor (and the signer, when the node is
/// signed) promise that nothing before SUBMITTING does I/O or waits.
bool claims_in_batch(const db::claimed_node& n, const claim_inputs& in, const engine& e) {
  if (!in.error_code.empty() || !in.executor->claims_in_batch(in.ctx))
    return false;
  if (!n.signing_required)
    return true;
  auto* signer = n.signer_key.empty() ? nullptr : e.providers.find_signer(n.signer_key);
  return signer && signer->signs_in_process();
}

} // namespace

db::event_batch events_for(const db::claimed_node& n, const engine& e) {
  db::event_batch events(n.request_id, e.settings.callback_max_attempts);
  if (n.has_callback)
    events.set_has_callback(*n.has_callback);
  return events;
}

claim_end run_claim(pqxx::work& tx, db::claimed_node n, const engine& e, db::event_batch& events,
                    std::vector<std::string>& first_dispatch, pass_result& out, bool batch_only,
                    db::context_result* prefetched) {
  const auto claimed_at = std::chrono::steady_clock::now();
  auto in = read_claim_inputs(tx, n, e, prefetched);
  const bool batchable = claims_in_batch(n, in, e);
  if (batch_only && !batchable)
    return claim_end{std::nullopt, false, false, true};
  mark_executing(n, events, first_dispatch);
  auto fail = [&](const std::string& code, const std::string& detail) {
    settle_in_claim(tx, n, node_state::failed, code, detail, events, out);
    return claim_end{std::nullopt, false, batchable, false};
  };
  if (!in.error_code.empty())
    return fail(in.error_code, in.error_detail);

  n.node_state = node_state::preparing; // lives only inside this transaction
  ready_to_submit r{n, std::move(in.ctx), {}, std::nullopt, in.executor, std::nullopt};
  if (n.seconds_since_predecessors >= 0)
    r.predecessors_done =
        claimed_at - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(n.seconds_since_predecessors));
  auto how = run_preflight(tx, n, *in.stored, r, e, events, out);
  if (how == pre_submit::go_on)
    how = run_prepare(tx, n, r, e, events, out);
  if (how != pre_submit::go_on)
    return claim_end{std::nullopt, how == pre_submit::deferred, batchable, false};
  auto* executor = r.executor;
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
    n.node_state = node_state::awaiting_signature;
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
  events.node_changed(n.request_state, n.node_key, node_state::submitting);
  // The SUBMITTING row itself is written with the transaction's other
  // claims (write_claims), which sets the claim token.
  r.node.node_state = node_state::submitting;
  r.node.attempt_no = attempt;
  r.node.idempotency_key = r.ctx.idempotency_key;
  return claim_end{std::move(r), false, batchable, false};
}

void write_claims(pqxx::work& tx, const std::vector<std::string>& first_dispatch,
                  db::event_batch& events, std::vector<ready_to_submit>& claimed, const engine& e,
                  const std::vector<db::activated_node>& left_activated) {
  db::write_batch batch;
  if (!first_dispatch.empty())
    db::add_first_dispatch(tx, batch, first_dispatch);
  events.flush_into(tx, batch);
  db::queue_activation(tx, batch, left_activated);
  if (claimed.empty()) {
    if (!batch.empty())
      batch.run(tx);
    return;
  }
  std::vector<db::submitting_write> rows;
  for (auto& r : claimed)
    rows.push_back({r.node.id, r.node.attempt_no, r.node.idempotency_key, e.settings.runtime_node,
                    r.node.activation_pending ? "BLOCKED" : "READY"});
  db::add_submitting(tx, batch, rows);
  std::map<std::string, std::string> tokens;
  for (auto row : batch.run(tx))
    tokens.emplace(row[0].c_str(), row[1].c_str());
  for (auto& r : claimed) {
    auto token = tokens.find(r.node.id);
    if (token == tokens.end())
      throw std::logic_error("claimed node " + r.node.id + " was not in its claimed state");
    r.node.claim_token = token->second;
  }
}

pending_claims::~pending_claims() {
  if (!committed)
    for (auto& r : items)
      release_prepared(*r.executor, r.ctx, r.action);
}

std::vector<db::context_result>
prefetch_contexts(pqxx::work& tx, const std::vector<db::claimed_node>& claimed, const engine& e) {
  std::vector<std::shared_ptr<const db::stored_plan>> plans;
  std::vector<db::context_request> wanted;
  for (auto& n : claimed) {
    plans.push_back(e.plans.get(tx, n.template_key, n.template_version));
    wanted.push_back({&n, plans.back().get(), n.attempt_no + 1});
  }
  return db::build_contexts(tx, wanted);
}

/// The activated nodes a chain claim leaves to the FIFO (its READY rows
/// still to write): all of `activated` but the ones in `taken`.
std::vector<db::activated_node> left_by_claim(const std::vector<db::activated_node>& activated,
                                              const std::vector<ready_to_submit>& taken) {
  std::set<std::pair<std::string, std::string>> claimed;
  for (auto& r : taken)
    claimed.emplace(r.node.request_id, r.node.node_key);
  std::vector<db::activated_node> left;
  for (auto& a : activated)
    if (!claimed.count({a.request_id, a.node_key}))
      left.push_back(a);
  return left;
}

void chain_claim(pqxx::work& tx, const std::vector<db::activated_node>& activated, const engine& e,
                 pass_result& out, pending_claims& chained, db::write_batch& before,
                 db::event_batch& gathered) {
  auto claimed = db::claim_activated(tx, activated, e.settings.network_class, &before);
  const int limit = std::max(1, e.settings.node_dispatch_batch_size);
  int taken = 0;
  std::vector<std::string> first_dispatch;
  auto contexts = prefetch_contexts(tx, claimed, e);
  for (size_t i = 0; i < claimed.size(); ++i) {
    if (taken >= limit)
      break;
    auto& n = claimed[i];
    auto events = events_for(n, e);
    auto end = run_claim(tx, n, e, events, first_dispatch, out, true, &contexts[i]);
    if (end.left)
      continue;
    ++taken;
    if (!end.deferred)
      ++out.processed;
    events.move_into(gathered);
    if (end.submit)
      chained.items.push_back(std::move(*end.submit));
  }
  write_claims(tx, first_dispatch, gathered, chained.items, e,
               left_by_claim(activated, chained.items));
  out.activated -= taken; // taken here: no other dispatcher needs waking for them
}
} // namespace mg::workers
