#include "persistence/request_view.hpp"

#include "persistence/db.hpp"

namespace mg::db {

namespace {

// Top-level fields of a movement (without nodes), for `r`.
constexpr const char* movement_fields =
    "'id', r.id, 'template_key', r.template_key, 'template_version', r.template_version,"
    " 'compiled_plan_hash', r.compiled_plan_hash, 'request_state', r.request_state,"
    " 'approval_status', r.approval_status, 'approved_by', r.approved_by,"
    " 'created_by', r.created_by, 'intent', r.intent, 'input_params', r.input_params,"
    " 'current_frontier', to_json(r.current_frontier), 'callback_url', r.callback_url,"
    " 'expires_at', r.expires_at, 'created_at', r.created_at, 'updated_at', r.updated_at";

// Microseconds since the epoch: exact (extract returns numeric), so the
// cursor reproduces the row's timestamp bit for bit.
constexpr const char* micros_of_created = "(extract(epoch FROM r.created_at) * 1000000)::bigint";

} // namespace

std::optional<std::string> movement_json(pqxx::transaction_base& tx, const std::string& id) {
  static const statement q{
      "mg_movement_json",
      std::string("SELECT json_build_object(") + movement_fields +
          ", 'nodes', COALESCE((SELECT json_agg(json_build_object("
          "   'node_key', n.node_key, 'node_kind', n.node_kind, 'action_type', n.action_type,"
          "   'node_state', n.node_state, 'attempt_no', n.attempt_no,"
          "   'provider_state', n.provider_state, 'provider_refs', n.provider_refs,"
          "   'error_code', n.error_code, 'started_at', n.started_at,"
          "   'updated_at', n.updated_at,"
          "   'artifacts', COALESCE((SELECT json_object_agg(s.kind, s.c) FROM"
          "     (SELECT a.kind, count(*) AS c FROM node_artifacts a WHERE a.node_id = n.id"
          "      GROUP BY a.kind ORDER BY a.kind) s), '{}'::json))"
          "   ORDER BY n.position)"
          "  FROM movement_request_nodes n WHERE n.request_id = r.id), '[]'::json))::text"
          " FROM movement_requests r WHERE r.id = $1::uuid"};
  auto r = exec(tx, q, id);
  if (r.empty())
    return std::nullopt;
  return std::string(r[0][0].c_str());
}

json_page list_movements(pqxx::transaction_base& tx, const std::string& state, int limit,
                         const std::optional<domain::list_cursor>& after) {
  static const statement q{
      "mg_list_movements",
      std::string("SELECT json_build_object(") + movement_fields + ")::text, " + micros_of_created +
          ", r.id FROM movement_requests r"
          " WHERE ($1 = '' OR r.request_state = $1)"
          "   AND ($2::bigint IS NULL OR (r.created_at, r.id) <"
          "        (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid))"
          " ORDER BY r.created_at DESC, r.id DESC LIMIT $4"};
  auto k = keyset_of(after);
  return page_of(exec(tx, q, state, k.micros(), k.id(), limit + 1), limit);
}

json_page list_events(pqxx::transaction_base& tx, const std::string& request_id, int limit,
                      const std::optional<domain::list_cursor>& after) {
  // audit_outbox rows stay after promotion; the UNION with audit_events
  // (same id and content) keeps each audit row once whichever table has it.
  static const statement q{
      "mg_list_events",
      "WITH timeline AS ("
      "  SELECT e.id, e.occurred_at, json_build_object('kind', 'event', 'id', e.id,"
      "    'event_type', e.event_type, 'node_key', e.node_key, 'occurred_at', e.occurred_at,"
      "    'payload', e.payload) AS item"
      "  FROM movement_events e WHERE e.request_id = $1::uuid"
      "  UNION ALL"
      "  SELECT a.id, a.occurred_at, json_build_object('kind', 'audit', 'id', a.id,"
      "    'action', a.action, 'actor', a.actor, 'occurred_at', a.occurred_at,"
      "    'detail', a.detail)"
      "  FROM (SELECT id, actor, action, detail, occurred_at FROM audit_outbox"
      "         WHERE subject = 'movement:' || $1"
      "        UNION"
      "        SELECT id, actor, action, detail, occurred_at FROM audit_events"
      "         WHERE subject = 'movement:' || $1) a)"
      " SELECT item::text, (extract(epoch FROM occurred_at) * 1000000)::bigint, id"
      " FROM timeline"
      " WHERE $2::bigint IS NULL OR (occurred_at, id) >"
      "       (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::uuid)"
      " ORDER BY occurred_at, id LIMIT $4"};
  auto k = keyset_of(after);
  return page_of(exec(tx, q, request_id, k.micros(), k.id(), limit + 1), limit);
}

bool request_exists(pqxx::transaction_base& tx, const std::string& id) {
  static const statement q{"mg_request_exists",
                           "SELECT 1 FROM movement_requests WHERE id = $1::uuid"};
  return !exec(tx, q, id).empty();
}

} // namespace mg::db
