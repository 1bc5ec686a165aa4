#pragma once
// Writes of the operator transitions (SPEC §5 table): reject, cancel,
// resume, retry and manual completion. The caller
// (movement_service) decides whether a transition is allowed from what
// these read under lock; every write here records its movement_events rows
// (and callback outbox rows) in the same transaction. Lock order: the
// request row before its node rows.
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "persistence/events.hpp"

namespace mg::db {

// --- request row -------------------------------------------------------------
/// The request row, locked FOR UPDATE.
struct operator_row {
  domain::request_state request_state = domain::request_state::pending_approval;
  std::string created_by;
  bool expired = false; // expires_at <= now
};

std::optional<operator_row> lock_request_row(pqxx::transaction_base& tx, const std::string& id);

/// PENDING_APPROVAL → REJECTED (approval_status rejected) with its event.
void reject_request(pqxx::transaction_base& tx, const std::string& id, const std::string& reason,
                    event_batch& events);

/// Whether any node of the request ever reached SUBMITTING. Run as its own
/// statement after the request row is locked: under READ COMMITTED it sees
/// every claim committed before the lock was granted.
bool any_node_ever_submitted(pqxx::transaction_base& tx, const std::string& id);

/// → CANCELLED; every node not COMPLETED, SKIPPED or CANCELLED → CANCELLED,
/// each with its event. Returns the cancelled node keys.
std::vector<std::string> cancel_request(pqxx::transaction_base& tx, const std::string& id,
                                        const std::string& reason, event_batch& events);

/// → EXECUTING (event when the state changes) and flagged for reconcile.
void reopen_request(pqxx::transaction_base& tx, const std::string& id,
                    domain::request_state current_state, event_batch& events);

/// UNKNOWN nodes get a fresh escalation window (unknown_since = now); an
/// OBSERVATION_TIMEOUT or PROVIDER_PROTOCOL_ERROR code (settled at once) is
/// cleared so recovery may act again. Returns how many nodes were touched.
int restart_escalation(pqxx::transaction_base& tx, const std::string& id);

// --- nodes -------------------------------------------------------------------
struct operator_node {
  std::string id;
  domain::node_state node_state = domain::node_state::blocked;
  std::string action_type;
  int attempt_no = 0;
};

/// The node `node_key` of the request, locked FOR UPDATE (take the request
/// row first).
std::optional<operator_node> lock_node(pqxx::transaction_base& tx, const std::string& request_id,
                                       const std::string& node_key);

/// FAILED → READY for its next attempt (the dispatcher increments
/// attempt_no when it claims the node); flags the request for reconcile.
void ready_failed_node(pqxx::transaction_base& tx, const std::string& request_id,
                       const std::string& node_key, domain::request_state current_state,
                       event_batch& events);

/// READY manual node → COMPLETED with `provider_refs` merged in; flags the
/// request for reconcile.
void complete_manual_node(pqxx::transaction_base& tx, const std::string& request_id,
                          const std::string& node_key, const std::string& provider_refs_json,
                          domain::request_state current_state, event_batch& events);

/// Keys and states of the request's FAILED or UNKNOWN nodes, in plan order.
std::vector<std::pair<std::string, domain::node_state>> broken_nodes(pqxx::transaction_base& tx,
                                                                     const std::string& request_id);

/// Wakes the dispatchers of every process when the request has a READY
/// node (NOTIFY is sent at commit).
void notify_if_ready(pqxx::transaction_base& tx, const std::string& request_id);

} // namespace mg::db
