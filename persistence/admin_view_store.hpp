#pragma once
// Read side of the admin inspection page (SPEC §5 admin listener): the
// movements list with its filters, one movement with everything an operator
// looks at (nodes, the template's DAG, artifacts, events), and the cluster
// nodes. PostgreSQL renders the JSON, so values leave the database exactly
// as stored.
#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "domain/movement_requests.hpp"
#include "persistence/request_view.hpp"

namespace mg::db {

/// A created_at window: from inclusive, to exclusive; each an ISO 8601 time
/// PostgreSQL reads as timestamptz, "" = unbounded.
struct created_range {
  std::string from;
  std::string to;
};

/// Newest first, keyset on (created_at, id). `state` / `template_key` ""
/// = any. Each item: id, template_key, template_version, request_state,
/// approval_status, intent, created_by, created_at, updated_at, node_count
/// and node_states ({state: count}).
json_page admin_list_movements(pqxx::transaction_base& tx, const std::string& state,
                               const std::string& template_key, const created_range& created,
                               int limit, const std::optional<domain::list_cursor>& after);

/// Most events a movement's detail carries (the newest ones).
constexpr int admin_event_limit = 500;

/// The movement's fields plus `nodes` (each with its artifacts: kind,
/// attempt_no, created_at, payload), `dag` ({nodes: [{node_key,
/// action_type, node_state}], edges: [[from, to]]} from templates.plan) and
/// `events` (movement_events oldest first, at most admin_event_limit, with
/// `events_truncated`); nullopt when there is no such request.
std::optional<std::string> admin_movement_json(pqxx::transaction_base& tx, const std::string& id);

/// Every cluster_nodes row with `last_seen_age_seconds`, as a JSON array.
std::string cluster_nodes_json(pqxx::transaction_base& tx);

} // namespace mg::db
