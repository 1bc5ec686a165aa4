#include "services/movement_service.hpp"

#include <algorithm>
#include <optional>

#include "config/log.hpp"
#include "domain/json_writer.hpp"
#include "domain/movement_requests.hpp"
#include "domain/recovery.hpp"
#include "persistence/audit_store.hpp"
#include "persistence/context_loader.hpp"
#include "persistence/movement_store.hpp"
#include "persistence/node_store.hpp"
#include "persistence/operator_store.hpp"
#include "persistence/request_view.hpp"
#include "services/recovery.hpp"

namespace mg::services {

using namespace api;

namespace {

using domain::node_state;
using domain::request_state;

db::reconcile_settings reconcile_settings_of(const config::settings& s) {
  return {s.unknown_escalate_seconds, s.callback_max_attempts};
}

/// Adds one member to a JSON object's text.
std::string with_member(std::string object, const std::string& name, const std::string& json) {
  object.pop_back(); // the closing brace
  return object + (object.size() > 1 ? "," : "") + json::quote(name) + ":" + json + "}";
}

reply refused(const char* action, const caller& who, const std::string& id, const error& e) {
  // Refusals write nothing to the database; the log is their only trace.
  log::info("movement call refused", {{"action", action},
                                      {"key_id", who.key_id},
                                      {"request_id", id},
                                      {"status", e.status},
                                      {"code", e.code},
                                      {"message", e.message}});
  return error_reply(e);
}

/// Thrown (and caught by create) when another transaction created the same
/// idempotency key between the first look and the insert.
struct lost_create_race {};

/// What an operator transition decided inside its transaction.
struct outcome {
  std::optional<error> refusal;
  std::string body; // the answer (200) when not refused
  std::string audit_detail = "{}";
  domain::request_change change; // what the committed transaction did
};

outcome refuse(error e) {
  outcome o;
  o.refusal = std::move(e);
  return o;
}

/// Runs one operator transition: `decide(tx)` reads under lock and either
/// refuses (rolled back: nothing changed) or writes; a success is audited
/// in the same transaction, committed, and announced to the runtime.
template <class F>
reply operator_call(service_context& ctx, const caller& who, const char* action,
                    const std::string& id, F&& decide) {
  constexpr int attempts = 3;
  for (int i = 1;; ++i) {
    try {
      domain::request_change change;
      auto r = with_transaction(ctx, [&](pqxx::transaction_base& tx) -> reply {
        outcome o = decide(tx);
        if (o.refusal)
          return refused(action, who, id, *o.refusal);
        db::write_audit(tx, who.key_id, action, "movement:" + id, o.audit_detail);
        tx.commit();
        change = o.change;
        return reply{200, std::move(o.body), {}};
      });
      if (r.status == 200 && ctx.request_changed)
        ctx.request_changed(id, change);
      return r;
    } catch (const pqxx::transaction_rollback&) {
      // Deadlock or serialization failure: nothing landed; try again.
      if (i == attempts)
        throw;
    }
  }
}

std::string string_array(const std::vector<std::pair<std::string, node_state>>& nodes) {
  json::writer w;
  w.begin_array();
  for (const auto& [key, state] : nodes)
    w.begin_object()
        .member("node_key", key)
        .member("node_state", domain::to_string(state))
        .end_object();
  return w.end_array().str();
}

/// 400 for the list parameters, with every problem listed.
std::optional<error> check_list_query(const list_query& q, bool with_state, int& limit,
                                      std::optional<domain::list_cursor>& cursor) {
  std::vector<field_error> bad;
  if (with_state && !q.state.empty() && !domain::parse_request_state(q.state))
    bad.push_back({"state", "unknown request state"});
  if (auto l = domain::parse_limit(q.limit))
    limit = *l;
  else
    bad.push_back({"limit", "must be an integer from 1 to 200"});
  if (!q.cursor.empty()) {
    cursor = domain::decode_cursor(q.cursor);
    if (!cursor)
      bad.push_back({"cursor", "malformed cursor"});
  }
  if (bad.empty())
    return std::nullopt;
  return bad_request("invalid query", std::move(bad));
}

std::string movement_or_empty(pqxx::transaction_base& tx, const std::string& id) {
  return db::movement_json(tx, id).value_or("{}");
}

/// SPEC §7: callbacks are never sent unsigned, so a process without
/// MG_CALLBACK_SECRET takes no callback_url it could never deliver.
std::optional<error> callbacks_unavailable(const std::string& callback_url,
                                           const config::settings& s) {
  if (callback_url.empty() || !s.callback_secret.empty())
    return std::nullopt;
  return error{422,
               "callbacks_not_configured",
               "callbacks are not configured on this server (MG_CALLBACK_SECRET is not set)",
               {{"callback_url", "callbacks are not configured"}}};
}

template <class State> bool one_of(State s, std::initializer_list<State> states) {
  return std::find(states.begin(), states.end(), s) != states.end();
}

/// A state's name for an operator's error message.
template <class State> std::string named(State s) {
  return std::string(domain::to_string(s));
}

/// SPEC §3: a template that names its asset (risk_controls.asset) moves
/// only that one; max_amount is in its units.
std::optional<api::error> asset_problem(const domain::create_body& b, const std::string& asset) {
  if (asset.empty())
    return std::nullopt;
  auto intent = json::parse(b.intent);
  if (intent && json::get_string(*intent, "asset") == asset)
    return std::nullopt;
  return unprocessable(
      "asset not moved by this template",
      {{"intent.asset", "must be " + asset + " (the template's risk_controls.asset)"}});
}

} // namespace

// --- create and reads --------------------------------------------------------

reply movement_service::create(const caller& who, const json::value& body,
                               const std::map<std::string, std::string>& members) {
  auto parsed = domain::parse_create_body(body, ctx_.settings.callback_allow_private);
  if (!parsed.ok())
    return refused("create", who, "", parsed.error);
  const auto& b = *parsed.value;
  if (auto e = callbacks_unavailable(b.callback_url, ctx_.settings))
    return refused("create", who, "", *e);
  std::string created_id;
  // A concurrent create with the same key loses (at the unique index, or
  // when create_request finds the winner's row); the next try answers from
  // the winner's row (200 or 409).
  for (int i = 1;; ++i) {
    try {
      auto r = with_transaction(ctx_, [&](pqxx::transaction_base& tx) -> reply {
        auto existing = db::find_by_idempotency_key(tx, b.idempotency_key);
        if (existing && existing->body_hash == b.body_hash)
          return reply{
              200, with_member(movement_or_empty(tx, existing->id), "deduplicated", "true"), {}};
        int version = b.template_version ? b.template_version
                                         : db::latest_template_version(tx, b.template_key);
        auto max_amount =
            version ? db::template_max_amount(tx, b.template_key, version) : std::nullopt;
        if (!max_amount)
          return refused(
              "create", who, "",
              unprocessable(
                  "unknown template",
                  {{"template_key",
                    "no template " + b.template_key +
                        (b.template_version ? " version " + std::to_string(version) : "")}}));
        if (!max_amount->empty()) {
          if (!domain::is_decimal(*max_amount))
            return refused("create", who, "",
                           unprocessable("template risk_controls.max_amount is not a decimal"));
          if (domain::compare_decimals(b.amount, *max_amount) > 0)
            return refused("create", who, "",
                           unprocessable("amount over the template's risk limit",
                                         {{"intent.amount",
                                           "exceeds risk_controls.max_amount " + *max_amount}}));
        }
        if (auto wrong = asset_problem(b, db::template_asset(tx, b.template_key, version)))
          return refused("create", who, "", *wrong);
        if (existing)
          return refused("create", who, existing->id,
                         conflict("idempotency_key already used with another body"));
        db::create_params p;
        p.template_key = b.template_key;
        p.template_version = version;
        // The reader's serialisation of the very document just checked:
        // never the raw bytes again (jsonb would keep the last of two
        // duplicate names; the reader refused those).
        p.intent = b.intent;
        p.input_params = b.input_params;
        if (auto it = members.find("intent"); it != members.end())
          p.intent = it->second;
        if (auto it = members.find("input_params"); it != members.end())
          p.input_params = it->second;
        p.callback_url = b.callback_url;
        p.idempotency_key = b.idempotency_key;
        p.created_by = who.key_id;
        p.network_class = ctx_.settings.network_class;
        p.approval_ttl_seconds = ctx_.settings.approval_ttl_seconds;
        p.body_hash = b.body_hash;
        db::create_result created;
        try {
          created = db::create_request(tx, ctx_.plans, p, ctx_.settings.callback_max_attempts);
        } catch (const std::invalid_argument& e) {
          return refused("create", who, "", unprocessable(e.what()));
        }
        // Another create with this key committed since our first look.
        if (created.deduplicated)
          throw lost_create_race{};
        const auto& id = created.id;
        db::write_audit(tx, who.key_id, "create", "movement:" + id,
                        json::writer()
                            .begin_object()
                            .member("idempotency_key", b.idempotency_key)
                            .member("template_key", b.template_key)
                            .member("template_version", version)
                            .end_object()
                            .str());
        auto object = movement_or_empty(tx, id);
        tx.commit();
        created_id = id;
        return reply{201, with_member(object, "deduplicated", "false"), {}};
      });
      if (r.status == 201 && ctx_.request_changed)
        ctx_.request_changed(created_id, {});
      return r;
    } catch (const pqxx::unique_violation&) {
      // A concurrent create with the same key won at the unique index.
      if (i == 3)
        throw;
    } catch (const lost_create_race&) {
      if (i == 3)
        throw std::runtime_error("idempotency key race did not settle");
    }
  }
}

reply movement_service::get(const caller& who, const std::string& id) {
  if (!domain::is_uuid(id))
    return error_reply(not_found("no movement " + id));
  return with_read_transaction(ctx_, [&](pqxx::transaction_base& tx) -> reply {
    auto object = db::movement_json(tx, id);
    if (!object)
      return error_reply(not_found("no movement " + id));
    return reply{200, *object, {}};
  });
}

reply movement_service::list(const caller& who, const list_query& q) {
  int limit = 50;
  std::optional<domain::list_cursor> cursor;
  if (auto e = check_list_query(q, true, limit, cursor))
    return error_reply(*e);
  return with_read_transaction(ctx_, [&](pqxx::transaction_base& tx) -> reply {
    return reply{200, db::page_body(db::list_movements(tx, q.state, limit, cursor)), {}};
  });
}

reply movement_service::events(const caller& who, const std::string& id, const list_query& q) {
  int limit = 50;
  std::optional<domain::list_cursor> cursor;
  if (auto e = check_list_query(q, false, limit, cursor))
    return error_reply(*e);
  if (!domain::is_uuid(id))
    return error_reply(not_found("no movement " + id));
  return with_read_transaction(ctx_, [&](pqxx::transaction_base& tx) -> reply {
    if (!db::request_exists(tx, id))
      return error_reply(not_found("no movement " + id));
    return reply{200, db::page_body(db::list_events(tx, id, limit, cursor)), {}};
  });
}

// --- operator transitions ------------------------------------------------------

reply movement_service::approve(const caller& who, const std::string& id, const json::value& body) {
  auto parsed = domain::parse_approve_body(body);
  if (!parsed.ok())
    return refused("approve", who, id, parsed.error);
  if (!domain::is_uuid(id))
    return refused("approve", who, id, not_found("no movement " + id));
  return operator_call(ctx_, who, "approve", id, [&](pqxx::transaction_base& tx) {
    // One lock (request, then its nodes) serves the checks and the approval.
    auto row = db::lock_for_approval(tx, id);
    if (!row)
      return refuse(not_found("no movement " + id));
    if (row->created_by == who.key_id)
      return refuse(forbidden("a request may not be approved by the key that created it"));
    if (row->request_state != request_state::pending_approval)
      return refuse(conflict("cannot approve a " + named(row->request_state) + " request"));
    if (row->expired)
      return refuse(conflict("the approval window has expired"));
    auto r =
        db::approve_locked(tx, ctx_.plans, *row, who.key_id, reconcile_settings_of(ctx_.settings));
    if (r.status != db::approve_status::approved)
      return refuse(conflict("cannot approve this request now"));
    outcome o;
    o.change = {true, r.reconciled.activated};
    o.body = movement_or_empty(tx, id);
    o.audit_detail = json::writer()
                         .begin_object()
                         .member("approver_id", parsed.value->approver_id)
                         .end_object()
                         .str();
    return o;
  });
}

reply movement_service::reject(const caller& who, const std::string& id, const json::value& body) {
  auto parsed = domain::parse_reason_body(body);
  if (!parsed.ok())
    return refused("reject", who, id, parsed.error);
  if (!domain::is_uuid(id))
    return refused("reject", who, id, not_found("no movement " + id));
  return operator_call(ctx_, who, "reject", id, [&](pqxx::transaction_base& tx) {
    auto row = db::lock_request_row(tx, id);
    if (!row)
      return refuse(not_found("no movement " + id));
    if (row->request_state != request_state::pending_approval)
      return refuse(conflict("cannot reject a " + named(row->request_state) + " request"));
    db::event_batch events(id, ctx_.settings.callback_max_attempts);
    db::reject_request(tx, id, parsed.value->reason, events);
    events.flush(tx);
    outcome o;
    o.body = movement_or_empty(tx, id);
    o.audit_detail =
        json::writer().begin_object().member("reason", parsed.value->reason).end_object().str();
    return o;
  });
}

reply movement_service::cancel(const caller& who, const std::string& id, const json::value& body) {
  auto parsed = domain::parse_reason_body(body);
  if (!parsed.ok())
    return refused("cancel", who, id, parsed.error);
  if (!domain::is_uuid(id))
    return refused("cancel", who, id, not_found("no movement " + id));
  return operator_call(ctx_, who, "cancel", id, [&](pqxx::transaction_base& tx) {
    auto row = db::lock_request_row(tx, id);
    if (!row)
      return refuse(not_found("no movement " + id));
    if (!one_of(row->request_state,
                {request_state::pending_approval, request_state::approved, request_state::executing,
                 request_state::waiting_manual_action}))
      return refuse(conflict("cannot cancel a " + named(row->request_state) + " request"));
    // A new statement after the lock: sees a claim that committed
    // SUBMITTING while this call waited for the request row.
    if (db::any_node_ever_submitted(tx, id))
      return refuse(conflict("a node has already been submitted to a provider"));
    db::event_batch events(id, ctx_.settings.callback_max_attempts);
    db::cancel_request(tx, id, parsed.value->reason, events);
    events.flush(tx);
    outcome o;
    o.body = movement_or_empty(tx, id);
    o.audit_detail =
        json::writer().begin_object().member("reason", parsed.value->reason).end_object().str();
    return o;
  });
}

reply movement_service::resume(const caller& who, const std::string& id, const json::value& body) {
  auto parsed = domain::parse_resume_body(body);
  if (!parsed.ok())
    return refused("resume", who, id, parsed.error);
  if (!domain::is_uuid(id))
    return refused("resume", who, id, not_found("no movement " + id));
  return operator_call(ctx_, who, "resume", id, [&](pqxx::transaction_base& tx) {
    auto row = db::lock_request_row(tx, id);
    if (!row)
      return refuse(not_found("no movement " + id));
    if (!one_of(row->request_state,
                {request_state::manual_intervention, request_state::waiting_manual_action}))
      return refuse(conflict("cannot resume a " + named(row->request_state) + " request"));
    int restarted = db::restart_escalation(tx, id);
    db::event_batch events(id, ctx_.settings.callback_max_attempts);
    db::reopen_request(tx, id, row->request_state, events);
    events.flush(tx);
    db::reconcile_request(tx, ctx_.plans, id, reconcile_settings_of(ctx_.settings));
    db::notify_if_ready(tx, id);
    outcome o;
    o.change.reconciled = true;
    o.body = movement_or_empty(tx, id);
    o.audit_detail = json::writer()
                         .begin_object()
                         .member("from", domain::to_string(row->request_state))
                         .member("unknown_nodes_restarted", restarted)
                         .end_object()
                         .str();
    return o;
  });
}

reply movement_service::retry(const caller& who, const std::string& id, const json::value& body) {
  auto parsed = domain::parse_retry_body(body);
  if (!parsed.ok())
    return refused("retry", who, id, parsed.error);
  if (!domain::is_uuid(id))
    return refused("retry", who, id, not_found("no movement " + id));
  const auto& key = parsed.value->node_key;
  return operator_call(ctx_, who, "retry", id, [&](pqxx::transaction_base& tx) {
    auto row = db::lock_request_row(tx, id);
    if (!row)
      return refuse(not_found("no movement " + id));
    auto node = db::lock_node(tx, id, key);
    if (!node)
      return refuse(unprocessable("unknown node", {{"node_key", "no node " + key}}));
    if (!one_of(row->request_state, {request_state::executing, request_state::manual_intervention,
                                     request_state::failed}))
      return refuse(conflict("cannot retry a node of a " + named(row->request_state) + " request"));
    if (!one_of(node->node_state, {node_state::failed, node_state::unknown}))
      return refuse(conflict("cannot retry a " + named(node->node_state) + " node"));
    db::event_batch events(id, ctx_.settings.callback_max_attempts);
    json::writer detail;
    detail.begin_object()
        .member("node_key", key)
        .member("from", domain::to_string(node->node_state));
    if (node->node_state == node_state::failed) {
      db::reopen_request(tx, id, row->request_state, events);
      db::ready_failed_node(tx, id, key, request_state::executing, events);
    } else {
      // UNKNOWN: ask the provider first (SPEC §1 recovery, same outcome
      // mapping as the node_recovery worker).
      if (!ctx_.providers)
        return refuse(unavailable("no executors configured for recovery"));
      auto n = db::load_node(tx, node->id);
      auto stored = ctx_.plans.get(tx, n->template_key, n->template_version);
      auto built = db::build_context(tx, *n, *stored, n->attempt_no);
      built.ctx.idempotency_key = n->idempotency_key; // the attempt's own key
      auto rr = call_recover(*n, built.ctx, *ctx_.providers);
      auto u = recover_update(*n, rr);
      if (u.next_state == node_state::unknown)
        return refuse(conflict("recover could not resolve the node's attempt; it stays UNKNOWN"));
      db::reopen_request(tx, id, row->request_state, events);
      n->request_state = request_state::executing;
      add_recover_artifacts(events, *n, rr, u.next_state);
      db::apply_node_update(tx, *n, u, events);
      detail.member("recover", domain::recover_outcome_name(rr.outcome))
          .member("to", domain::to_string(u.next_state));
    }
    events.flush(tx);
    db::reconcile_request(tx, ctx_.plans, id, reconcile_settings_of(ctx_.settings));
    db::notify_if_ready(tx, id);
    outcome o;
    o.change.reconciled = true;
    o.body = with_member(movement_or_empty(tx, id), "unresolved_nodes",
                         string_array(db::broken_nodes(tx, id)));
    o.audit_detail = detail.end_object().str();
    return o;
  });
}

reply movement_service::complete(const caller& who, const std::string& id,
                                 const std::string& node_key, const json::value& body) {
  auto parsed = domain::parse_complete_body(body);
  if (!parsed.ok())
    return refused("complete", who, id, parsed.error);
  if (!domain::is_uuid(id))
    return refused("complete", who, id, not_found("no movement " + id));
  return operator_call(ctx_, who, "complete", id, [&](pqxx::transaction_base& tx) {
    auto row = db::lock_request_row(tx, id);
    if (!row)
      return refuse(not_found("no movement " + id));
    auto node = db::lock_node(tx, id, node_key);
    if (!node)
      return refuse(not_found("no node " + node_key + " in movement " + id));
    if (!one_of(row->request_state,
                {request_state::executing, request_state::waiting_manual_action}))
      return refuse(
          conflict("cannot complete a node of a " + named(row->request_state) + " request"));
    if (node->action_type.rfind("manual_", 0) != 0)
      return refuse(conflict("only manual_* nodes are completed by an operator"));
    if (node->node_state != node_state::ready)
      return refuse(conflict("cannot complete a " + named(node->node_state) + " node"));
    db::event_batch events(id, ctx_.settings.callback_max_attempts);
    db::complete_manual_node(tx, id, node_key, parsed.value->provider_refs, row->request_state,
                             events);
    events.flush(tx);
    db::reconcile_request(tx, ctx_.plans, id, reconcile_settings_of(ctx_.settings));
    db::notify_if_ready(tx, id);
    outcome o;
    o.change.reconciled = true;
    o.body = movement_or_empty(tx, id);
    o.audit_detail = json::writer()
                         .begin_object()
                         .member("node_key", node_key)
                         .key("provider_refs")
                         .raw(parsed.value->provider_refs)
                         .end_object()
                         .str();
    return o;
  });
}

} // namespace mg::services
