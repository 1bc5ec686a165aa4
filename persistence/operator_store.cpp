#include "persistence/operator_store.hpp"

#include <algorithm>

#include "domain/json_writer.hpp"
#include "persistence/db.hpp"
#include "persistence/movement_store.hpp"

namespace mg::db {

using domain::node_state;
using domain::request_state;

namespace {

std::string reason_data(const std::string& reason) {
  return reason.empty() ? "{}"
                        : json::writer().begin_object().member("reason", reason).end_object().str();
}

} // namespace

std::optional<operator_row> lock_request_row(pqxx::transaction_base& tx, const std::string& id) {
  static const statement q{"mg_operator_lock_request",
                           "SELECT request_state, created_by,"
                           " COALESCE(expires_at <= clock_timestamp(), false)"
                           " FROM movement_requests WHERE id = $1 FOR UPDATE"};
  auto r = exec(tx, q, id);
  if (r.empty())
    return std::nullopt;
  return operator_row{request_state_of(r[0][0]), r[0][1].c_str(), r[0][2].as<bool>()};
}

void reject_request(pqxx::transaction_base& tx, const std::string& id, const std::string& reason,
                    event_batch& events) {
  static const statement q{"mg_operator_reject",
                           "UPDATE movement_requests SET request_state = 'REJECTED',"
                           " approval_status = 'rejected', needs_reconcile = false,"
                           " updated_at = clock_timestamp()"
                           " WHERE id = $1 AND request_state = 'PENDING_APPROVAL'"};
  exec(tx, q, id);
  events.add({"request_rejected", request_state::rejected, "", std::nullopt, reason_data(reason)});
}

bool any_node_ever_submitted(pqxx::transaction_base& tx, const std::string& id) {
  // ever_submitted is set by the claim that commits SUBMITTING; the states
  // cover rows written before that column existed or by hand.
  static const statement q{
      "mg_operator_ever_submitted",
      "SELECT EXISTS (SELECT 1 FROM movement_request_nodes WHERE request_id = $1"
      " AND (ever_submitted OR node_state IN ('SUBMITTING', 'SUBMITTED', 'OBSERVING',"
      "      'UNKNOWN')))"};
  return exec(tx, q, id)[0][0].as<bool>();
}

std::vector<std::string> cancel_request(pqxx::transaction_base& tx, const std::string& id,
                                        const std::string& reason, event_batch& events) {
  static const statement request{"mg_operator_cancel_request",
                                 "UPDATE movement_requests SET request_state = 'CANCELLED',"
                                 " current_frontier = '{}', needs_reconcile = false,"
                                 " updated_at = clock_timestamp() WHERE id = $1"};
  static const statement nodes{
      "mg_operator_cancel_nodes",
      "UPDATE movement_request_nodes SET node_state = 'CANCELLED', claim_token = NULL,"
      " next_observe_at = NULL, updated_at = clock_timestamp()"
      " WHERE request_id = $1 AND node_state NOT IN ('COMPLETED', 'SKIPPED', 'CANCELLED')"
      " RETURNING node_key, position"};
  exec(tx, request, id);
  auto r = exec(tx, nodes, id);
  std::vector<std::pair<int, std::string>> cancelled;
  for (auto row : r)
    cancelled.emplace_back(row[1].as<int>(), row[0].c_str());
  std::sort(cancelled.begin(), cancelled.end());
  std::vector<std::string> keys;
  for (auto& [position, key] : cancelled) {
    events.node_changed(request_state::cancelled, key, node_state::cancelled);
    keys.push_back(key);
  }
  events.add(
      {"request_cancelled", request_state::cancelled, "", std::nullopt, reason_data(reason)});
  return keys;
}

void reopen_request(pqxx::transaction_base& tx, const std::string& id, request_state current_state,
                    event_batch& events) {
  static const statement q{
      "mg_operator_reopen",
      "UPDATE movement_requests SET request_state = 'EXECUTING', needs_reconcile = true,"
      " reconcile_requested_at = clock_timestamp(), updated_at = clock_timestamp()"
      " WHERE id = $1"};
  exec(tx, q, id);
  if (current_state != request_state::executing)
    events.add({"request_executing", request_state::executing, "", std::nullopt, "{}"});
}

int restart_escalation(pqxx::transaction_base& tx, const std::string& id) {
  static const statement q{
      "mg_operator_restart_escalation",
      "UPDATE movement_request_nodes SET unknown_since = clock_timestamp(),"
      " error_code = CASE WHEN error_code IN ('OBSERVATION_TIMEOUT', 'PROVIDER_PROTOCOL_ERROR')"
      "   THEN 'RECOVERY_PENDING'"
      "   ELSE error_code END,"
      " updated_at = clock_timestamp()"
      " WHERE request_id = $1 AND node_state = 'UNKNOWN'"};
  return static_cast<int>(exec(tx, q, id).affected_rows());
}

std::optional<operator_node> lock_node(pqxx::transaction_base& tx, const std::string& request_id,
                                       const std::string& node_key) {
  static const statement q{"mg_operator_lock_node",
                           "SELECT id, node_state, action_type, attempt_no"
                           " FROM movement_request_nodes WHERE request_id = $1 AND node_key = $2"
                           " FOR UPDATE"};
  auto r = exec(tx, q, request_id, node_key);
  if (r.empty())
    return std::nullopt;
  return operator_node{r[0][0].c_str(), node_state_of(r[0][1]), r[0][2].c_str(), r[0][3].as<int>()};
}

void ready_failed_node(pqxx::transaction_base& tx, const std::string& request_id,
                       const std::string& node_key, request_state current_state,
                       event_batch& events) {
  static const statement q{
      "mg_operator_ready_failed",
      "UPDATE movement_request_nodes SET node_state = 'READY', error_code = NULL,"
      " error_detail = NULL, claim_token = NULL, unknown_since = NULL, next_observe_at = NULL,"
      " prepare_errors = 0, retry_at = NULL, updated_at = clock_timestamp()"
      " WHERE request_id = $1 AND node_key = $2 AND node_state = 'FAILED'"};
  exec(tx, q, request_id, node_key);
  events.node_changed(current_state, node_key, node_state::ready, "{\"retried\":true}");
}

void complete_manual_node(pqxx::transaction_base& tx, const std::string& request_id,
                          const std::string& node_key, const std::string& provider_refs_json,
                          request_state current_state, event_batch& events) {
  static const statement node{
      "mg_operator_complete_manual",
      "UPDATE movement_request_nodes SET node_state = 'COMPLETED',"
      " provider_refs = provider_refs || $3::jsonb, error_code = NULL, error_detail = NULL,"
      " updated_at = clock_timestamp()"
      " WHERE request_id = $1 AND node_key = $2 AND node_state = 'READY'"};
  static const statement flag{
      "mg_operator_flag_reconcile",
      "UPDATE movement_requests SET needs_reconcile = true,"
      " reconcile_requested_at = clock_timestamp(), updated_at = clock_timestamp()"
      " WHERE id = $1"};
  exec(tx, flag, request_id);
  exec(tx, node, request_id, node_key, provider_refs_json);
  events.node_changed(current_state, node_key, node_state::completed);
}

std::vector<std::pair<std::string, node_state>> broken_nodes(pqxx::transaction_base& tx,
                                                             const std::string& request_id) {
  static const statement q{"mg_operator_broken_nodes",
                           "SELECT node_key, node_state FROM movement_request_nodes"
                           " WHERE request_id = $1 AND node_state IN ('FAILED', 'UNKNOWN')"
                           " ORDER BY position"};
  std::vector<std::pair<std::string, node_state>> out;
  for (auto row : exec(tx, q, request_id))
    out.emplace_back(row[0].c_str(), node_state_of(row[1]));
  return out;
}

void notify_if_ready(pqxx::transaction_base& tx, const std::string& request_id) {
  static const statement q{"mg_operator_any_ready",
                           "SELECT EXISTS (SELECT 1 FROM movement_request_nodes"
                           " WHERE request_id = $1 AND node_state = 'READY')"};
  if (exec(tx, q, request_id)[0][0].as<bool>())
    tx.exec(notify_dispatch_sql());
}

} // namespace mg::db
