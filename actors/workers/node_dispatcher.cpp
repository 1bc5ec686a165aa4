#include "actors/workers/node_dispatcher.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "actors/workers/cctp_caller_check.hpp"
#include "actors/workers/node_result.hpp"
#include "actors/workers/observation.hpp"
#include "config/log.hpp"
#include "config/metrics.hpp"
#include "domain/cctp_caller.hpp"
#include "domain/evm_transfer_plan.hpp"
#include "domain/json.hpp"
#include "domain/json_writer.hpp"
#include "domain/provider_answer.hpp"
#include "domain/signing_policy.hpp"
#include "domain/step_proof.hpp"
#include "domain/timing.hpp"
#include "persistence/claim_store.hpp"
#include "persistence/context_loader.hpp"
#include "persistence/db.hpp"
#include "persistence/evm_nonce_store.hpp"
#include "persistence/movement_store.hpp"
#include "persistence/node_store.hpp"

namespace mg::workers {

using domain::node_state;

namespace {

constexpr int candidate_window = 8;
constexpr int max_chain_steps = 16;

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

/// The first dispatch of a request's node makes it EXECUTING; the row is
/// written with the claim transaction's other writes (write_claims).
void mark_executing(db::claimed_node& n, db::event_batch& events,
                    std::vector<std::string>& first_dispatch) {
  if (n.request_state != "APPROVED")
    return;
  first_dispatch.push_back(n.request_id);
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

/// The events of a claim of `n`, with the outbox part only when its request
/// has a callback_url.
db::event_batch events_for(const db::claimed_node& n, const engine& e) {
  db::event_batch events(n.request_id, e.settings.callback_max_attempts);
  if (n.has_callback)
    events.set_has_callback(*n.has_callback);
  return events;
}

/// How a claim ended.
struct claim_end {
  std::optional<ready_to_submit> submit; // to SUBMITTING (write_claims): submit once committed
  bool deferred = false;                 // still READY, waiting out its retry delay
  bool batchable = false;                // may share its claim transaction with others
  bool left = false;                     // not batchable in a batch: untouched, still READY
};

/// One node's claim inside `tx`: everything up to its SUBMITTING write.
/// With `batch_only`, a node that may not share the transaction is left
/// as it was (its row stays locked until `tx` ends, then a later pass
/// claims it on its own).
claim_end run_claim(pqxx::work& tx, db::claimed_node n, const engine& e, db::event_batch& events,
                    std::vector<std::string>& first_dispatch, pass_result& out, bool batch_only,
                    db::context_result* prefetched = nullptr) {
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

  n.node_state = "PREPARING"; // lives only inside this transaction
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
  // The SUBMITTING row itself is written with the transaction's other
  // claims (write_claims), which sets the claim token.
  r.node.node_state = "SUBMITTING";
  r.node.attempt_no = attempt;
  r.node.idempotency_key = r.ctx.idempotency_key;
  return claim_end{std::move(r), false, batchable, false};
}

/// The writes a claim transaction gathered, before it commits: its
/// requests' first dispatches, every claim's events and artifacts and the
/// SUBMITTING rows of `claimed`, one statement each, in one round trip.
/// Sets each claim's token.
void write_claims(pqxx::work& tx, const std::vector<std::string>& first_dispatch,
                  db::event_batch& events, std::vector<ready_to_submit>& claimed, const engine& e) {
  db::write_batch batch;
  if (!first_dispatch.empty())
    db::add_first_dispatch(tx, batch, first_dispatch);
  events.flush_into(tx, batch);
  if (claimed.empty()) {
    if (!batch.empty())
      batch.run(tx);
    return;
  }
  std::vector<db::submitting_write> rows;
  for (auto& r : claimed)
    rows.push_back({r.node.id, r.node.attempt_no, r.node.idempotency_key, e.settings.runtime_node});
  db::add_submitting(tx, batch, rows);
  std::map<std::string, std::string> tokens;
  for (auto row : batch.run(tx))
    tokens.emplace(row[0].c_str(), row[1].c_str());
  for (auto& r : claimed) {
    auto token = tokens.find(r.node.id);
    if (token == tokens.end())
      throw std::logic_error("claimed node " + r.node.id + " was not READY");
    r.node.claim_token = token->second;
  }
}

/// A submit answer checked (SPEC §4): one it may not give leaves the node
/// UNKNOWN with PROVIDER_PROTOCOL_ERROR, settled at once.
domain::step_result checked_submit(domain::step_result result) {
  if (!result.next_state)
    result.next_state = node_state::unknown; // no answer is "we do not know"
  return domain::checked_answer(domain::executor_step::submit, std::move(result));
}

/// We asked and do not know the answer: recovery finds out.
domain::step_result unanswered_submit(const std::string& why) {
  domain::step_result unknown;
  unknown.next_state = node_state::unknown;
  unknown.error_code = "SUBMIT_ERROR";
  unknown.error_detail = why;
  return unknown;
}

/// executor.submit for one node.
domain::step_result call_submit(const ready_to_submit& r) {
  auto answer = [&] {
    try {
      return checked_submit(
          r.executor->submit(r.ctx, r.action, r.signature ? &*r.signature : nullptr));
    } catch (const domain::provider_protocol_error& ex) {
      return domain::protocol_violation(domain::executor_step::submit, {}, ex.what());
    } catch (const std::exception& ex) {
      return unanswered_submit(ex.what());
    }
  }();
  answer.answered_at = std::chrono::system_clock::now();
  return answer;
}

/// The submits of a claimed batch, each executor's share in one
/// submit_many call; answers in the batch's order.
std::vector<domain::step_result> submit_all(const std::vector<ready_to_submit>& batch) {
  if (batch.size() == 1)
    return {call_submit(batch.front())};
  std::vector<domain::step_result> answers(batch.size());
  std::map<domain::executor*, std::vector<size_t>> shares;
  for (size_t i = 0; i < batch.size(); ++i)
    shares[batch[i].executor].push_back(i);
  for (auto& [executor, items] : shares) {
    std::vector<domain::submit_call> calls;
    for (auto i : items)
      calls.push_back(
          {&batch[i].ctx, &batch[i].action, batch[i].signature ? &*batch[i].signature : nullptr});
    try {
      auto got = executor->submit_many(calls);
      if (got.size() != calls.size())
        throw domain::provider_protocol_error("submit_many answered " + std::to_string(got.size()) +
                                              " of " + std::to_string(calls.size()) + " calls");
      for (size_t j = 0; j < items.size(); ++j)
        answers[items[j]] = checked_submit(std::move(got[j]));
    } catch (const domain::provider_protocol_error& ex) {
      for (auto i : items)
        answers[i] = domain::protocol_violation(domain::executor_step::submit, {}, ex.what());
    } catch (const std::exception& ex) {
      for (auto i : items)
        answers[i] = unanswered_submit(ex.what());
    }
    const auto answered_at = std::chrono::system_clock::now();
    for (auto i : items)
      answers[i].answered_at = answered_at;
  }
  return answers;
}

/// A submitted node with its provider's answers, waiting for its result
/// commit.
struct submitted {
  ready_to_submit r;
  domain::step_result answer;
  std::optional<domain::step_result> observation; // SPEC §1 inline first observation
  bool stale = false; // recovery moved the node meanwhile: nothing written
};

bool in_flight(node_state s) {
  return s == node_state::submitted || s == node_state::observing;
}

db::node_update submit_update(const ready_to_submit& r, const domain::step_result& s) {
  db::node_update u;
  u.next_state = *s.next_state;
  db::take_provider_result(u, s);
  if (in_flight(u.next_state))
    u.next_observe_in_seconds = domain::observe_delay(r.node.action_type, s.retry_after_seconds);
  return u;
}

/// SPEC §1 inline first observation: an answer that asks to be observed at
/// once is observed here, outside any lock, instead of by the observer
/// (wake-ups off: never, as the reference).
std::optional<domain::step_result> observe_at_once(const ready_to_submit& r,
                                                   const domain::step_result& s, const engine& e) {
  if (!e.settings.wakeups_enabled)
    return std::nullopt;
  auto u = submit_update(r, s);
  if (!in_flight(u.next_state) || u.next_observe_in_seconds.value_or(1) != 0)
    return std::nullopt;
  auto ctx = r.ctx;
  ctx.provider_refs = json::merge_members(r.node.provider_refs, s.provider_refs);
  return call_observe(r.node, ctx, e);
}

/// The node as the observer would have read it after the submit result.
db::claimed_node after_submit(const ready_to_submit& r, const db::node_update& u) {
  db::claimed_node n = r.node;
  n.node_state = std::string(domain::to_string(u.next_state));
  n.provider_refs = json::merge_members(n.provider_refs, u.provider_refs.value_or("{}"));
  return n;
}

/// One submitted node's result as the steps of one row write: the submit
/// answer, then its inline first observation when there is one. Their
/// artifacts go to `events`.
std::vector<db::node_update> submitted_steps(const submitted& item, db::event_batch& events,
                                             pass_result& out) {
  const auto& r = item.r;
  auto u = submit_update(r, item.answer);
  events.add_artifact(
      {r.node.id, r.node.attempt_no, "submit_proof", domain::step_proof_json(item.answer), ""});
  events.add_generated_artifacts(r.node.id, r.node.attempt_no, item.answer.generated_artifacts);
  if (!item.observation) {
    out.wake_observer |= in_flight(u.next_state);
    return {u};
  }
  auto observed = after_submit(r, u);
  auto ou = observation_update(observed, *item.observation);
  add_observation_artifacts(events, observed, *item.observation);
  if (ou.next_observe_in_seconds && *ou.next_observe_in_seconds == 0)
    out.wake_observer = true;
  return {u, ou};
}

/// Claims whose prepared actions are given back (executor.abandon) unless
/// the transaction that wrote their SUBMITTING rows commits.
struct pending_claims {
  std::vector<ready_to_submit> items;
  bool committed = false;
  pending_claims() = default;
  pending_claims(const pending_claims&) = delete;
  pending_claims& operator=(const pending_claims&) = delete;
  ~pending_claims() {
    if (!committed)
      for (auto& r : items)
        release_prepared(*r.executor, r.ctx, r.action);
  }
};

/// The next attempts' contexts of `claimed`, read in one statement (a
/// claim that refuses its node before the context ignores it).
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

/// SPEC §1 chain claim: the successors the results in `tx` activated are
/// claimed in the same transaction (READY → SUBMITTING, write-ahead, their
/// own tokens), under the batch-claim rule, up to the batch size; the rest
/// stay READY for the FIFO. The dispatch gate and manual nodes are the
/// claim statement's filters. `before` runs first, in the claim's round trip.
void chain_claim(pqxx::work& tx, const std::vector<db::activated_node>& activated, const engine& e,
                 pass_result& out, pending_claims& chained, db::write_batch& before) {
  auto claimed = db::claim_activated(tx, activated, e.settings.network_class, &before);
  if (claimed.empty())
    return;
  const int limit = std::max(1, e.settings.node_dispatch_batch_size);
  int taken = 0;
  db::event_batch gathered("", e.settings.callback_max_attempts);
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
  write_claims(tx, first_dispatch, gathered, chained.items, e);
  out.activated -= taken; // taken here: no other dispatcher needs waking for them
}

/// All results of a claim in one transaction: their requests and nodes
/// locked first (in request id order), each result re-checked under the
/// lock against the claim it was produced for, so a stale one (recovery
/// moved its node meanwhile) is left out alone and the others land. With
/// `chain`, the successors they activate are claimed in it too; returns
/// those to submit.
std::vector<ready_to_submit> commit_results(pqxx::connection& c, std::vector<submitted>& items,
                                            const engine& e, bool chain, pass_result& out) {
  pqxx::work tx(c);
  std::vector<const db::claimed_node*> claims;
  for (auto& item : items)
    claims.push_back(&item.r.node);
  auto current = db::lock_current_claims(tx, claims);
  pass_result part;
  // Every result's events and artifacts in one statement and every node row
  // in one more (the requests are locked, so the foreign-key checks wait
  // for nothing).
  db::event_batch gathered("", e.settings.callback_max_attempts);
  std::vector<std::unique_ptr<db::event_batch>> events; // one per result
  std::vector<db::node_result> results;
  for (auto& item : items) {
    item.stale = !current.count(item.r.node.id);
    if (item.stale) {
      log::warn("stale submit result dropped",
                {{"node_id", item.r.node.id}, {"detail", "its attempt or claim token moved on"}});
      continue;
    }
    events.push_back(std::make_unique<db::event_batch>(item.r.node.request_id,
                                                       e.settings.callback_max_attempts));
    results.push_back(
        {&item.r.node, submitted_steps(item, *events.back(), part), events.back().get()});
  }
  // Each request reconciled once, after all of its results, all in one
  // round trip.
  db::write_batch pending;
  auto done = apply_and_reconcile(tx, e, results, {}, gathered, pending, db::lock_wait::wait);
  std::vector<db::activated_node> activated;
  for (size_t i = 0; i < done.reconciled.size(); ++i) {
    part.activated += done.outcomes[i].activated;
    for (auto& key : done.outcomes[i].activated_keys)
      activated.push_back({done.reconciled[i], key});
  }
  // Before the chain claim (in its round trip): a successor's context reads
  // its predecessors' artifacts.
  gathered.flush_into(tx, pending);
  pending_claims chained;
  if (chain)
    chain_claim(tx, activated, e, part, chained, pending);
  else if (!pending.empty())
    pending.run(tx);
  tx.commit();
  chained.committed = true;
  out.processed += part.processed;
  out.reconcile.insert(out.reconcile.end(), part.reconcile.begin(), part.reconcile.end());
  out.activated += part.activated;
  out.wake_observer |= part.wake_observer;
  return std::move(chained.items);
}

/// SPEC §1: a result commit that fails on a lost connection is retried
/// after reconnecting (and one rolled back by a deadlock at once), still
/// conditional on the claim tokens. If the database stays away, recovery
/// finds the SUBMITTING nodes after their grace.
/// A retry claims no successors: whatever sank the first try may have been
/// the chain claim, and the results must land.
std::vector<ready_to_submit> commit_with_retry(db::connection_slot& conn,
                                               std::vector<submitted>& items, const engine& e,
                                               bool chain, pass_result& out) {
  constexpr int attempts = 30;
  for (int i = 1;; ++i) {
    try {
      return commit_results(conn.get(), items, e, chain && i == 1, out);
    } catch (const pqxx::transaction_rollback& ex) {
      // Deadlock or serialization failure: nothing was written; try again.
      if (i == attempts)
        throw;
      log::warn("submit result commit rolled back; retrying",
                {{"nodes", static_cast<int>(items.size())}, {"try", i}, {"error", ex.what()}});
    } catch (const std::exception& ex) {
      const bool connection = db::is_connection_error(ex);
      if ((!connection && !(chain && i == 1)) || i == attempts)
        throw;
      if (!connection) {
        // Only the chain claim does more than the results do.
        log::warn("submit results failed with their chain claim; retrying without it",
                  {{"nodes", static_cast<int>(items.size())}, {"error", ex.what()}});
        continue;
      }
      conn.reset();
      log::warn("submit result commit lost its connection; retrying",
                {{"nodes", static_cast<int>(items.size())}, {"try", i}});
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
}

/// Where dispatcher `lane` (of `lanes`) starts its walk of `listed`
/// candidates: lane k at k/lanes of the list.
size_t walk_start(int lane, int lanes, size_t listed) {
  if (lanes <= 1)
    return 0;
  return (static_cast<size_t>(lane % lanes) * listed / static_cast<size_t>(lanes)) % listed;
}

/// Walks the unlocked FIFO candidates and claims free ones. The first claim
/// is the first statement of its own transaction: a miss rolls that
/// transaction back (releasing the skipped attempt's partial locks, as the
/// reference's miss-only savepoint does) and a hit goes on in it, so a hit
/// costs no SAVEPOINT/RELEASE round trips. When that node claims in batch,
/// further listed nodes of other requests that do too join the transaction
/// (all claimed in one wait-free statement), up to the batch size; one
/// COMMIT makes all their SUBMITTING rows durable. Returns the nodes to
/// submit.
std::vector<ready_to_submit> claim_and_prepare(db::connection_slot& conn, const engine& e, int lane,
                                               pass_result& out) {
  const auto& network_class = e.settings.network_class;
  const size_t batch_size =
      e.settings.wakeups_enabled
          ? static_cast<size_t>(std::max(1, e.settings.node_dispatch_batch_size))
          : 1;
  const int window = std::max(candidate_window, static_cast<int>(batch_size));
  std::vector<std::string> tried; // missed or deferred in this pass
  size_t deferred = 0;
  for (;;) {
    std::vector<std::string> ids;
    {
      pqxx::nontransaction list(conn.get());
      ids = db::dispatch_candidates(list, network_class, tried, window);
    }
    const size_t listed = ids.size();
    // Parallel dispatchers list the same FIFO head: each starts its walk at
    // its own share of it, spread evenly, so they do not all race for the
    // oldest nodes (nor a batch claim for its neighbour's) and pay a miss
    // each. The walk still covers every listed candidate.
    if (tried.empty() && listed > 0)
      std::rotate(ids.begin(), ids.begin() + walk_start(lane, e.settings.node_dispatchers, listed),
                  ids.end());
    std::vector<ready_to_submit> batch;
    db::event_batch gathered("", e.settings.callback_max_attempts);
    // A deferred node was looked at, not worked on: alone it still keeps
    // the drain going (processed 1), but it does not add to the count.
    auto finish = [&] {
      if (out.processed == 0 && deferred > 0)
        out.processed = 1;
      return std::move(batch);
    };
    // One claimed node's end, gathered into the transaction's writes.
    auto take = [&](const db::claimed_node& n, db::event_batch& events, claim_end& end) {
      if (!end.deferred)
        ++out.processed;
      events.move_into(gathered);
      if (end.submit)
        batch.push_back(std::move(*end.submit));
      else if (end.deferred) {
        // Nothing was done for it: the nodes behind it are not held up.
        tried.push_back(n.id);
        ++deferred;
      }
    };
    for (size_t pos = 0; pos < ids.size(); ++pos) {
      pqxx::work tx(conn.get());
      std::vector<std::string> first_dispatch;
      auto claimed = db::claim_for_dispatch(tx, ids[pos], network_class,
                                            db::claim_scope::first_in_transaction);
      if (!claimed) {
        tx.abort(); // releases any partial lock
        tried.push_back(ids[pos]);
        continue;
      }
      auto events = events_for(*claimed, e);
      auto end = run_claim(tx, *claimed, e, events, first_dispatch, out, false);
      take(*claimed, events, end);
      const bool batching = end.batchable && batch_size > 1;
      if (batching) {
        // The rest of the listed candidates that claim in batch join this
        // transaction, claimed in one statement, one node per request.
        std::set<std::string> requests{claimed->request_id};
        size_t claims = 1;
        const std::vector<std::string> rest(ids.begin() + static_cast<long>(pos) + 1, ids.end());
        auto joining = db::claim_for_dispatch_batch(tx, rest, network_class);
        auto contexts = prefetch_contexts(tx, joining, e);
        for (size_t i = 0; i < joining.size() && claims < batch_size; ++i) {
          auto& n = joining[i];
          if (!requests.insert(n.request_id).second)
            continue; // the next pass takes it
          auto more = events_for(n, e);
          auto joined = run_claim(tx, n, e, more, first_dispatch, out, true, &contexts[i]);
          if (joined.left)
            continue;
          ++claims;
          take(n, more, joined);
        }
      }
      write_claims(tx, first_dispatch, gathered, batch, e);
      tx.commit();
      if (batching || !batch.empty() || !end.deferred)
        return finish(); // a batch, or a node on its own submitted or settled
    }
    if (static_cast<int>(listed) < window) {
      // Work exists but its rows are busy (observer or reconcile hold the
      // request): look again shortly instead of after a full interval.
      if (tried.size() > deferred)
        out.busy = true;
      return finish();
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

/// The result commits on /metrics: how many results each commits, how long
/// it takes (retries included), and how many answered results wait for
/// theirs right now.
struct result_commit_meters {
  metrics::histogram& batch_size;
  metrics::histogram& seconds;
  metrics::gauge& waiting;
};

result_commit_meters& result_commits() {
  static result_commit_meters m{
      metrics::registry::global().get_histogram(
          "movegate_result_commit_batch_size",
          "Node results (with their reconciles and chain claims) committed per transaction.",
          {1, 2, 4, 8, 16, 32, 64, 128, 256}),
      metrics::registry::global().get_histogram(
          "movegate_result_commit_seconds",
          "From node results handed to their commit to the commit acknowledged, retries included.",
          metrics::duration_buckets()),
      metrics::registry::global().get_gauge(
          "movegate_results_awaiting_commit",
          "Executor answers received whose result transaction has not committed yet.")};
  return m;
}

/// Counts `n` results as waiting for their commit while it lives.
class awaiting_commit {
public:
  explicit awaiting_commit(size_t n) : n_(static_cast<double>(n)) {
    result_commits().waiting.add(n_);
  }
  awaiting_commit(const awaiting_commit&) = delete;
  awaiting_commit& operator=(const awaiting_commit&) = delete;
  ~awaiting_commit() { result_commits().waiting.add(-n_); }

private:
  double n_;
};

bool stop_requested(const std::atomic<bool>* stopping) {
  return stopping && stopping->load(std::memory_order_acquire);
}

/// Submits `claimed` (their SUBMITTING rows committed) and commits their
/// results; returns the successors chain-claimed with them. A stop asked
/// for while the submits ran cancels the chain claim: a draining runtime
/// claims nothing new.
std::vector<ready_to_submit>
submit_and_commit(db::connection_slot& conn, std::vector<ready_to_submit> claimed, const engine& e,
                  bool chain, const std::atomic<bool>* stopping, pass_result& out) {
  auto answers = submit_all(claimed);
  awaiting_commit waiting(answers.size());
  chain = chain && !stop_requested(stopping);
  std::vector<submitted> results;
  for (size_t i = 0; i < claimed.size(); ++i) {
    auto& r = claimed[i];
    auto& answer = answers[i];
    if (answer.error_code == domain::fenced_error_code) {
      ++out.stale;
      log::warn("submit refused: attempt was fenced by recovery", {{"node_id", r.node.id}});
      continue;
    }
    record_hop(r, answer);
    auto observation = observe_at_once(r, answer, e);
    results.push_back({std::move(r), std::move(answer), std::move(observation)});
  }
  if (results.empty())
    return {};
  const auto handed = std::chrono::steady_clock::now();
  auto chained = commit_with_retry(conn, results, e, chain, out);
  result_commits().seconds.observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - handed).count());
  result_commits().batch_size.observe(static_cast<double>(results.size()));
  for (auto& item : results)
    out.stale += item.stale ? 1 : 0;
  return chained;
}

} // namespace

pass_result dispatch_pass(db::connection_slot& conn, const engine& e, int lane,
                          const std::atomic<bool>* stopping) {
  pass_result out;
  hop_histogram(); // exported (empty) before the first hop
  result_commits();
  auto batch = claim_and_prepare(conn, e, lane, out);
  // SPEC §1 chain claim (off with wake-ups off, as the reference). A pass
  // follows chains a bounded number of steps, so one long chain does not
  // keep its dispatcher from the FIFO.
  for (int step = 1; !batch.empty(); ++step)
    batch = submit_and_commit(conn, std::move(batch), e,
                              e.settings.wakeups_enabled && step < max_chain_steps, stopping, out);
  return out;
}

} // namespace mg::workers
