#include "persistence/movement_store.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <stdexcept>

#include "domain/json.hpp"
#include "persistence/db.hpp"
#include "persistence/events.hpp"

namespace mg::db {

std::string notify_dispatch_sql() {
  return std::string("SELECT pg_notify('") + dispatch_channel +
         "', current_setting('application_name'))";
}

using domain::node_state;
using domain::request_state;

create_result create_request(pqxx::transaction_base& tx, plan_cache& plans, const create_params& p,
                             int callback_max_attempts) {
  int version =
      p.template_version ? p.template_version : latest_template_version(tx, p.template_key);
  if (version == 0)
    throw std::invalid_argument("unknown template " + p.template_key);
  auto stored = plans.get(tx, p.template_key, version);
  std::vector<std::string> keys, kinds, types, executors, signers, side, signing;
  for (auto& n : stored->plan.nodes) {
    keys.push_back(n.node_key);
    kinds.push_back(n.node_kind);
    types.push_back(n.action_type);
    executors.push_back(n.executor_key);
    signers.push_back(n.signer_key);
    side.push_back(n.side_effect ? "t" : "f");
    signing.push_back(n.signing_required ? "t" : "f");
  }
  // The request and its nodes in one statement. An idempotency key already
  // taken inserts nothing (after waiting for a concurrent insert of the same
  // key to end), and the existing row answers below.
  static const statement insert{
      "mg_create_request",
      "WITH req AS (INSERT INTO movement_requests (network_class, template_key,"
      "  template_version, compiled_plan_hash, intent, input_params, request_state, expires_at,"
      "  callback_url, idempotency_key, created_by, create_body_hash)"
      "  VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, 'PENDING_APPROVAL',"
      "   clock_timestamp() + make_interval(secs => $7), $8, $9, $10, $18)"
      "  ON CONFLICT (idempotency_key) DO NOTHING RETURNING id, created_at),"
      " nodes AS (INSERT INTO movement_request_nodes (request_id, request_created_at, position,"
      "  node_key, node_kind, action_type, executor_key, signer_key, side_effect,"
      "  signing_required, node_state)"
      "  SELECT req.id, req.created_at, ord - 1, k, kind, t, e, NULLIF(s, ''), se, sr, 'BLOCKED'"
      "  FROM req, unnest($11::text[], $12::text[], $13::text[], $14::text[], $15::text[],"
      "                   $16::bool[], $17::bool[]) WITH ORDINALITY AS u(k, kind, t, e, s, se, sr,"
      "                                                                  ord))"
      " SELECT id FROM req"};
  auto r = exec(tx, insert, p.network_class, p.template_key, version, stored->graph_hash, p.intent,
                p.input_params, p.approval_ttl_seconds, null_if_empty(p.callback_url),
                p.idempotency_key, p.created_by, text_array(keys), text_array(kinds),
                text_array(types), text_array(executors), text_array(signers), text_array(side),
                text_array(signing), null_if_empty(p.body_hash));
  if (r.empty()) {
    auto existing = tx.exec_params("SELECT id FROM movement_requests WHERE idempotency_key = $1",
                                   p.idempotency_key);
    if (existing.empty())
      throw std::runtime_error("idempotency key " + p.idempotency_key +
                               " conflicted but its request is gone");
    return {existing[0][0].c_str(), true};
  }
  std::string id = r[0][0].c_str();
  event_batch events(id, callback_max_attempts);
  events.set_has_callback(!p.callback_url.empty());
  events.add({"request_created", request_state::pending_approval, "", std::nullopt, "{}"});
  events.flush(tx);
  return {id, false};
}

namespace {

/// Locks the request rows (in id order) and then all their nodes, in one
/// round trip. Lock order stays requests, then nodes: the nodes' scan is
/// keyed on an array the requests' CTE yields first, so every request row is
/// locked before any node row.
std::string lock_requests_with_nodes_sql(lock_wait wait) {
  return std::string(
             "WITH req AS MATERIALIZED ("
             "  SELECT id, request_state, dispatch_paused, attention_raised, needs_reconcile,"
             "   to_json(current_frontier)::text AS frontier, template_key, template_version,"
             "   callback_url IS NOT NULL AS has_callback"
             "  FROM movement_requests WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE") +
         (wait == lock_wait::skip_locked ? " SKIP LOCKED" : "") +
         "),"
         " nodes AS MATERIALIZED ("
         "  SELECT request_id, position, id, attempt_no, claim_token, observe_count, node_key,"
         "   node_state, COALESCE(error_code, '') AS error_code,"
         "   COALESCE(extract(epoch FROM clock_timestamp() - unknown_since)::float8, 0) AS "
         "unknown_for"
         "  FROM movement_request_nodes WHERE request_id = ANY(ARRAY(SELECT id FROM req))"
         "  ORDER BY request_id, position FOR UPDATE)"
         " SELECT req.id::text, req.request_state, req.dispatch_paused, req.attention_raised,"
         "  req.needs_reconcile, req.frontier, req.template_key, req.template_version,"
         "  req.has_callback, nodes.id::text, nodes.attempt_no, nodes.claim_token::text,"
         "  nodes.observe_count, nodes.node_key, nodes.node_state, nodes.error_code,"
         "  nodes.unknown_for"
         " FROM req LEFT JOIN nodes ON nodes.request_id = req.id ORDER BY req.id, nodes.position";
}

std::string request_event_type(request_state s) {
  switch (s) {
  case request_state::executing:
    return "request_executing";
  case request_state::completed:
    return "request_completed";
  case request_state::failed:
    return "request_failed";
  case request_state::waiting_manual_action:
  case request_state::manual_intervention:
    return "request_attention";
  default: {
    std::string name(domain::to_string(s));
    for (auto& c : name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return "request_" + name;
  }
  }
}

std::string attention_data(domain::attention_reason why) {
  switch (why) {
  case domain::attention_reason::side_effect_at_risk:
    return "{\"reason\":\"side_effect_at_risk\"}";
  case domain::attention_reason::manual_intervention:
    return "{\"reason\":\"manual_intervention\"}";
  case domain::attention_reason::waiting_manual_action:
    return "{\"reason\":\"waiting_manual_action\"}";
  default:
    return "{}";
  }
}

std::string frontier_data(const std::vector<std::string>& frontier) {
  std::string out = "{\"frontier\":[";
  for (size_t i = 0; i < frontier.size(); ++i)
    out += (i ? "," : "") + json::quote(frontier[i]);
  return out + "]}";
}

/// The events of reconcile's actions, in the order the request saw them.
void add_reconcile_events(event_batch& events, const domain::reconcile_actions& actions,
                          request_state state) {
  for (auto& key : actions.activate)
    events.node_changed(state, key, node_state::ready);
  if (actions.new_state)
    events.add({request_event_type(state), state, "", std::nullopt,
                state == request_state::manual_intervention ||
                        state == request_state::waiting_manual_action
                    ? attention_data(actions.attention)
                    : "{}"});
  else if (actions.attention != domain::attention_reason::none)
    events.add({"request_attention", state, "", std::nullopt, attention_data(actions.attention)});
  if (actions.frontier_changed)
    events.add({"frontier_advanced", state, "", std::nullopt, frontier_data(actions.frontier)});
}

/// Makes READY the BLOCKED nodes named by the arrays of request ids and
/// node keys at parameters `first` and `first + 1`.
std::string activation_sql(int first) {
  return "UPDATE movement_request_nodes n SET node_state = 'READY',"
         " updated_at = clock_timestamp() FROM unnest($" +
         std::to_string(first) + "::uuid[], $" + std::to_string(first + 1) +
         "::text[]) AS a(request_id, node_key) WHERE n.request_id = a.request_id"
         " AND n.node_key = a.node_key AND n.node_state = 'BLOCKED'";
}

// Activation rides on the requests' update: all their rows are locked
// already, so one round trip writes them all.
const statement update_requests{
    "mg_reconciled_requests",
    "WITH activated AS (" + activation_sql(6) +
        ")"
        " UPDATE movement_requests r SET request_state = w.request_state,"
        " dispatch_paused = w.dispatch_paused, attention_raised = w.attention_raised,"
        " current_frontier = ARRAY(SELECT json_array_elements_text(w.frontier::json)),"
        " needs_reconcile = false, updated_at = clock_timestamp()"
        " FROM unnest($1::uuid[], $2::text[], $3::bool[], $4::bool[], $5::text[])"
        "   AS w(id, request_state, dispatch_paused, attention_raised, frontier)"
        " WHERE r.id = w.id"};

} // namespace

void queue_activation(pqxx::transaction_base& tx, write_batch& batch,
                      const std::vector<activated_node>& nodes) {
  static const statement q{"mg_activate_nodes", activation_sql(1)};
  if (nodes.empty())
    return;
  std::vector<std::string> requests, keys;
  for (auto& a : nodes) {
    requests.push_back(a.request_id);
    keys.push_back(a.node_key);
  }
  batch.add(tx, q, text_array(requests), text_array(keys));
}

namespace {

const statement clear_reconcile_flags{
    "mg_clear_reconcile_flags",
    "UPDATE movement_requests SET needs_reconcile = false WHERE id = ANY($1::uuid[])"};

/// The arguments of update_requests, one array per column.
struct request_writes {
  std::vector<std::string> ids, states, paused, attention, frontiers;
  std::vector<std::string> activated_requests, activated_keys;

  /// Without `activates`, the caller writes the activated nodes' READY rows
  /// (SPEC §1 chain claim: only for the ones its claim does not take).
  void add(const std::string& id, request_state state, const domain::reconcile_actions& actions,
           bool activates = true) {
    ids.push_back(id);
    states.emplace_back(domain::to_string(state));
    paused.push_back(actions.dispatch_paused ? "t" : "f");
    attention.push_back(actions.attention_raised ? "t" : "f");
    std::string frontier = "[";
    for (size_t i = 0; i < actions.frontier.size(); ++i)
      frontier += (i ? "," : "") + json::quote(actions.frontier[i]);
    frontiers.push_back(frontier + "]");
    if (!activates)
      return;
    for (auto& key : actions.activate) {
      activated_requests.push_back(id);
      activated_keys.push_back(key);
    }
  }

  void queue(pqxx::transaction_base& tx, write_batch& batch) const {
    if (!ids.empty())
      batch.add(tx, update_requests, text_array(ids), text_array(states), text_array(paused),
                text_array(attention), text_array(frontiers), text_array(activated_requests),
                text_array(activated_keys));
  }
};

/// One locked request's reconcile: its outcome, with what it writes queued
/// on `writes` (or `clear_flags`) and its events in `events`.
reconcile_outcome reconcile_locked(const std::string& id, const locked_request& req,
                                   plan_cache& plans, pqxx::transaction_base& tx,
                                   const reconcile_settings& settings, bool activates,
                                   request_writes& writes, std::vector<std::string>& clear_flags,
                                   event_batch& events) {
  reconcile_outcome out;
  out.found = true;
  out.request_state = req.state;
  if (!domain::is_active(req.state)) {
    out.terminal =
        domain::is_terminal(req.state) || req.state == request_state::manual_intervention;
    if (req.needs_reconcile) {
      clear_flags.push_back(id);
      out.wrote = true;
    }
    return out;
  }
  auto stored = plans.get(tx, req.template_key, req.template_version);
  domain::reconcile_input in;
  in.state = req.state;
  in.dispatch_paused = req.dispatch_paused;
  in.attention_raised = req.attention_raised;
  in.frontier = req.frontier;
  for (auto& n : req.nodes)
    in.nodes.push_back(n.view);
  in.unknown_escalate_seconds = settings.unknown_escalate_seconds;
  auto actions = domain::reconcile(stored->plan, in);
  out.changed = actions.changes_anything(in);
  auto state = actions.new_state.value_or(req.state);
  out.request_state = state;
  out.terminal = domain::is_terminal(state) || state == request_state::manual_intervention;
  if (!out.changed && !req.needs_reconcile)
    return out;
  event_batch own(id, settings.callback_max_attempts);
  own.set_has_callback(req.has_callback);
  add_reconcile_events(own, actions, state);
  own.move_into(events);
  out.activated = static_cast<int>(actions.activate.size());
  out.activated_keys = actions.activate;
  out.wrote = true;
  writes.add(id, state, actions, activates);
  return out;
}

std::vector<std::string> unlocked_ids(const std::vector<std::string>& ids,
                                      const locked_requests& locked) {
  std::vector<std::string> out;
  for (auto& id : ids)
    if (!locked.count(id))
      out.push_back(id);
  return out;
}

/// Which of `ids` exist (read without a lock).
std::set<std::string> existing_requests(pqxx::transaction_base& tx,
                                        const std::vector<std::string>& ids) {
  static const statement q{"mg_existing_requests",
                           "SELECT id::text FROM movement_requests WHERE id = ANY($1::uuid[])"};
  std::set<std::string> out;
  for (auto row : exec(tx, q, text_array(ids)))
    out.insert(row[0].c_str());
  return out;
}

} // namespace

locked_requests lock_requests_with_nodes(pqxx::transaction_base& tx,
                                         std::vector<std::string> request_ids, lock_wait wait) {
  static const statement waiting{"mg_lock_requests_nodes",
                                 lock_requests_with_nodes_sql(lock_wait::wait)};
  static const statement skipping{"mg_lock_requests_nodes_skip",
                                  lock_requests_with_nodes_sql(lock_wait::skip_locked)};
  std::sort(request_ids.begin(), request_ids.end());
  request_ids.erase(std::unique(request_ids.begin(), request_ids.end()), request_ids.end());
  locked_requests out;
  if (request_ids.empty())
    return out;
  for (auto row : exec(tx, wait == lock_wait::wait ? waiting : skipping, text_array(request_ids))) {
    auto [it, fresh] = out.try_emplace(row[0].c_str());
    auto& req = it->second;
    if (fresh)
      req = locked_request{request_state_of(row[1]),
                           row[2].as<bool>(),
                           row[3].as<bool>(),
                           row[4].as<bool>(),
                           json_string_array(row[5].c_str()),
                           row[6].c_str(),
                           row[7].as<int>(),
                           row[8].as<bool>(),
                           {}};
    if (!row[9].is_null())
      req.nodes.push_back(
          {row[9].c_str(),
           row[10].as<int>(),
           row[11].is_null() ? "" : row[11].c_str(),
           row[12].as<int>(),
           {row[13].c_str(), node_state_of(row[14]), row[15].c_str(), row[16].as<double>()}});
  }
  return out;
}

std::vector<reconcile_outcome>
reconcile_locked_requests(pqxx::transaction_base& tx, plan_cache& plans,
                          const locked_requests& locked, std::vector<std::string> request_ids,
                          const reconcile_settings& settings, event_batch* gather_events,
                          write_batch* pending, const std::set<std::string>& caller_activates) {
  std::sort(request_ids.begin(), request_ids.end());
  request_ids.erase(std::unique(request_ids.begin(), request_ids.end()), request_ids.end());
  std::set<std::string> held_elsewhere;
  if (auto missing = unlocked_ids(request_ids, locked); !missing.empty())
    held_elsewhere = existing_requests(tx, missing);
  event_batch own_events("", settings.callback_max_attempts);
  auto& events = gather_events ? *gather_events : own_events;
  request_writes writes;
  std::vector<std::string> clear_flags;
  std::vector<reconcile_outcome> outcomes;
  for (auto& id : request_ids) {
    auto req = locked.find(id);
    if (req != locked.end()) {
      outcomes.push_back(reconcile_locked(id, req->second, plans, tx, settings,
                                          !caller_activates.count(id), writes, clear_flags,
                                          events));
      continue;
    }
    reconcile_outcome absent;
    absent.held_elsewhere = held_elsewhere.count(id) > 0;
    outcomes.push_back(absent);
  }
  write_batch own_batch; // one round trip for the requests, their nodes and the events
  auto& batch = pending ? *pending : own_batch;
  if (!clear_flags.empty())
    batch.add(tx, clear_reconcile_flags, text_array(clear_flags));
  writes.queue(tx, batch);
  if (!gather_events)
    own_events.flush_into(tx, batch);
  if (!pending && !batch.empty())
    batch.run(tx);
  return outcomes;
}

std::vector<reconcile_outcome> reconcile_requests(pqxx::transaction_base& tx, plan_cache& plans,
                                                  std::vector<std::string> request_ids,
                                                  const reconcile_settings& settings,
                                                  event_batch* gather_events, lock_wait wait,
                                                  write_batch* pending) {
  auto locked = lock_requests_with_nodes(tx, request_ids, wait);
  return reconcile_locked_requests(tx, plans, locked, std::move(request_ids), settings,
                                   gather_events, pending);
}

reconcile_outcome reconcile_request(pqxx::transaction_base& tx, plan_cache& plans,
                                    const std::string& request_id,
                                    const reconcile_settings& settings,
                                    event_batch* gather_events) {
  return reconcile_requests(tx, plans, {request_id}, settings, gather_events).front();
}

std::optional<approval_lock> lock_for_approval(pqxx::transaction_base& tx,
                                               const std::string& request_id) {
  // The request row, then (only when it can be approved) its nodes, locked
  // in one round trip: the nodes' scan is gated on the request CTE, so the
  // request row is locked first, as everywhere.
  static const statement q{
      "mg_lock_for_approval",
      "WITH req AS MATERIALIZED ("
      "  SELECT request_state, created_by, COALESCE(expires_at <= clock_timestamp(), false)"
      "   AS expired, dispatch_paused, attention_raised,"
      "   to_json(current_frontier)::text AS frontier, template_key, template_version,"
      "   callback_url IS NOT NULL AS has_callback"
      "  FROM movement_requests WHERE id = $1 FOR UPDATE),"
      " nodes AS MATERIALIZED ("
      "  SELECT position, node_key, node_state, COALESCE(error_code, '') AS error_code,"
      "   COALESCE(extract(epoch FROM clock_timestamp() - unknown_since)::float8, 0) AS unknown_for"
      "  FROM movement_request_nodes WHERE request_id = $1"
      "   AND EXISTS (SELECT 1 FROM req WHERE request_state = 'PENDING_APPROVAL' AND NOT expired)"
      "  ORDER BY position FOR UPDATE)"
      " SELECT req.*, nodes.node_key, nodes.node_state, nodes.error_code, nodes.unknown_for"
      " FROM req LEFT JOIN nodes ON true ORDER BY nodes.position"};
  auto r = exec(tx, q, request_id);
  if (r.empty())
    return std::nullopt;
  auto row = r[0];
  approval_lock out;
  out.request_id = request_id;
  out.request_state = request_state_of(row[0]);
  out.created_by = row[1].c_str();
  out.expired = row[2].as<bool>();
  out.dispatch_paused = row[3].as<bool>();
  out.attention_raised = row[4].as<bool>();
  out.frontier = json_string_array(row[5].c_str());
  out.template_key = row[6].c_str();
  out.template_version = row[7].as<int>();
  out.has_callback = row[8].as<bool>();
  for (auto node : r)
    if (!node[9].is_null())
      out.nodes.push_back(
          {node[9].c_str(), node_state_of(node[10]), node[11].c_str(), node[12].as<double>()});
  return out;
}

approve_result approve_locked(pqxx::transaction_base& tx, plan_cache& plans,
                              const approval_lock& locked, const std::string& approver,
                              const reconcile_settings& settings) {
  approve_result out;
  if (locked.request_state != request_state::pending_approval) {
    out.status = approve_status::conflict;
    return out;
  }
  if (locked.expired) {
    out.status = approve_status::expired;
    return out;
  }
  // Reconcile as of APPROVED, on the rows locked above: the approval, the
  // activation of the roots and every event go in one round trip with the
  // dispatchers' NOTIFY.
  auto stored = plans.get(tx, locked.template_key, locked.template_version);
  domain::reconcile_input in;
  in.state = request_state::approved;
  in.dispatch_paused = locked.dispatch_paused;
  in.attention_raised = locked.attention_raised;
  in.frontier = locked.frontier;
  in.nodes = locked.nodes;
  in.unknown_escalate_seconds = settings.unknown_escalate_seconds;
  auto actions = domain::reconcile(stored->plan, in);
  auto state = actions.new_state.value_or(request_state::approved);

  static const statement approve{
      "mg_approve_request",
      "WITH activated AS (UPDATE movement_request_nodes SET node_state = 'READY',"
      "  updated_at = clock_timestamp() WHERE request_id = $1 AND node_key = ANY($6::text[])"
      "  AND node_state = 'BLOCKED')"
      " UPDATE movement_requests SET request_state = $2, approval_status = 'approved',"
      " approved_by = $7, dispatch_paused = $3, attention_raised = $4,"
      " current_frontier = $5::text[], needs_reconcile = false, updated_at = clock_timestamp()"
      " WHERE id = $1 AND request_state = 'PENDING_APPROVAL'"};
  static const statement notify{"mg_notify_dispatch", notify_dispatch_sql()};
  event_batch events(locked.request_id, settings.callback_max_attempts);
  events.set_has_callback(locked.has_callback);
  events.add({"request_approved", request_state::approved, "", std::nullopt, "{}"});
  add_reconcile_events(events, actions, state);
  write_batch batch;
  batch.add(tx, approve, locked.request_id, std::string(domain::to_string(state)),
            actions.dispatch_paused, actions.attention_raised, text_array(actions.frontier),
            text_array(actions.activate), approver);
  events.flush_into(tx, batch);
  batch.add(tx, notify);
  batch.run(tx);

  out.status = approve_status::approved;
  out.reconciled.found = true;
  out.reconciled.request_state = state;
  out.reconciled.activated = static_cast<int>(actions.activate.size());
  out.reconciled.changed = true;
  out.reconciled.wrote = true;
  out.reconciled.terminal =
      domain::is_terminal(state) || state == request_state::manual_intervention;
  return out;
}

approve_result approve_request(pqxx::transaction_base& tx, plan_cache& plans,
                               const std::string& request_id, const std::string& approver,
                               const reconcile_settings& settings) {
  auto locked = lock_for_approval(tx, request_id);
  if (!locked)
    return {};
  return approve_locked(tx, plans, *locked, approver, settings);
}

std::vector<std::string> reconcile_sweep_candidates(pqxx::transaction_base& tx,
                                                    const std::string& network_class,
                                                    double unknown_escalate_seconds, int limit,
                                                    double grace_seconds) {
  auto r = tx.exec_params(
      "(SELECT id FROM movement_requests WHERE needs_reconcile AND network_class = $1"
      "  AND request_state IN ('APPROVED', 'EXECUTING', 'WAITING_MANUAL_ACTION')"
      "  AND (reconcile_requested_at IS NULL"
      "       OR reconcile_requested_at <= clock_timestamp() - make_interval(secs => $4))"
      "  ORDER BY created_at LIMIT $3)"
      " UNION "
      "(SELECT r.id FROM movement_requests r WHERE r.request_state = 'EXECUTING'"
      "  AND r.network_class = $1 AND EXISTS (SELECT 1 FROM movement_request_nodes n"
      "   WHERE n.request_id = r.id AND n.node_state = 'UNKNOWN'"
      "   AND (n.error_code IN ('OBSERVATION_TIMEOUT', 'PROVIDER_PROTOCOL_ERROR')"
      "        OR n.unknown_since <= clock_timestamp() - make_interval(secs => $2)))"
      "  LIMIT $3)",
      network_class, unknown_escalate_seconds, limit, grace_seconds);
  std::vector<std::string> ids;
  for (auto row : r)
    ids.emplace_back(row[0].c_str());
  return ids;
}

std::optional<request_snapshot> load_request(pqxx::transaction_base& tx,
                                             const std::string& request_id) {
  auto r = tx.exec_params("SELECT id, request_state, to_json(current_frontier)::text,"
                          " dispatch_paused, needs_reconcile FROM movement_requests WHERE id = $1",
                          request_id);
  if (r.empty())
    return std::nullopt;
  request_snapshot s;
  s.id = r[0][0].c_str();
  s.request_state = request_state_of(r[0][1]);
  s.frontier = json_string_array(r[0][2].c_str());
  s.dispatch_paused = r[0][3].as<bool>();
  s.needs_reconcile = r[0][4].as<bool>();
  auto nodes =
      tx.exec_params("SELECT node_key, action_type, node_state, attempt_no,"
                     " COALESCE(error_code, ''), provider_refs::text"
                     " FROM movement_request_nodes WHERE request_id = $1 ORDER BY position",
                     request_id);
  for (auto row : nodes)
    s.nodes.push_back({row[0].c_str(), row[1].c_str(), node_state_of(row[2]), row[3].as<int>(),
                       row[4].c_str(), row[5].c_str()});
  return s;
}

std::optional<existing_request> find_by_idempotency_key(pqxx::transaction_base& tx,
                                                        const std::string& idempotency_key) {
  static const statement q{"mg_find_by_idem_key",
                           "SELECT id, COALESCE(create_body_hash, '') FROM movement_requests"
                           " WHERE idempotency_key = $1"};
  auto r = exec(tx, q, idempotency_key);
  if (r.empty())
    return std::nullopt;
  return existing_request{r[0][0].c_str(), r[0][1].c_str()};
}

void add_first_dispatch(pqxx::transaction_base& tx, write_batch& batch,
                        const std::vector<std::string>& request_ids) {
  static const statement q{"mg_mark_executing",
                           "UPDATE movement_requests SET request_state = 'EXECUTING',"
                           " updated_at = clock_timestamp()"
                           " WHERE id = ANY($1::uuid[]) AND request_state = 'APPROVED'"};
  batch.add(tx, q, text_array(request_ids));
}

namespace {

const statement flag_request_statement{
    "mg_flag_request",
    "UPDATE movement_requests SET needs_reconcile = needs_reconcile OR $2,"
    " reconcile_requested_at = CASE WHEN $2 AND NOT needs_reconcile THEN clock_timestamp()"
    "   ELSE reconcile_requested_at END,"
    " dispatch_paused = dispatch_paused OR $3, updated_at = clock_timestamp() WHERE id = $1"};

} // namespace

void flag_request(pqxx::transaction_base& tx, const std::string& request_id, bool reconcile,
                  bool pause) {
  exec(tx, flag_request_statement, request_id, reconcile, pause);
}

void add_request_flag(pqxx::transaction_base& tx, write_batch& batch, const std::string& request_id,
                      bool reconcile, bool pause) {
  batch.add(tx, flag_request_statement, request_id, reconcile, pause);
}

std::vector<std::string> expire_pending_requests(pqxx::transaction_base& tx,
                                                 const std::string& network_class, int limit,
                                                 int callback_max_attempts) {
  // One statement claims and transitions the batch; rows another
  // transaction holds (an approval in flight) are skipped, not waited for.
  static const statement q{
      "mg_expire_requests",
      "WITH due AS ("
      "  SELECT id FROM movement_requests"
      "  WHERE request_state = 'PENDING_APPROVAL' AND network_class = $1"
      "    AND expires_at IS NOT NULL AND expires_at < now()"
      "  LIMIT $2 FOR UPDATE SKIP LOCKED)"
      " UPDATE movement_requests r SET request_state = 'EXPIRED', approval_status = 'rejected',"
      "   updated_at = clock_timestamp()"
      " FROM due WHERE r.id = due.id RETURNING r.id"};
  std::vector<std::string> ids;
  for (auto row : exec(tx, q, network_class, limit)) {
    ids.emplace_back(row[0].c_str());
    event_batch events(ids.back(), callback_max_attempts);
    events.add({"request_expired", domain::request_state::expired, "", std::nullopt, "{}"});
    events.flush(tx);
  }
  return ids;
}

} // namespace mg::db
