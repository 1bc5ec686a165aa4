#include "persistence/admin_view_store.hpp"

#include "persistence/db.hpp"

namespace mg::db {

json_page admin_list_movements(pqxx::transaction_base& tx, const std::string& state,
                               const std::string& template_key, const created_range& created,
                               int limit, const std::optional<domain::list_cursor>& after) {
  // The cursor carries created_at in exact microseconds (extract returns
  // numeric), so the next page starts exactly after the last row shown.
  static const statement q{
      "mg_admin_list_movements",
      "SELECT json_build_object('id', r.id, 'template_key', r.template_key,"
      "  'template_version', r.template_version, 'request_state', r.request_state,"
      "  'approval_status', r.approval_status, 'intent', r.intent, 'created_by', r.created_by,"
      "  'created_at', r.created_at, 'updated_at', r.updated_at,"
      "  'node_count', (SELECT count(*) FROM movement_request_nodes n WHERE n.request_id = r.id),"
      "  'node_states', COALESCE((SELECT json_object_agg(s.node_state, s.c) FROM"
      "    (SELECT n.node_state, count(*) AS c FROM movement_request_nodes n"
      "      WHERE n.request_id = r.id GROUP BY n.node_state ORDER BY n.node_state) s),"
      "    '{}'::json))::text,"
      " (extract(epoch FROM r.created_at) * 1000000)::bigint, r.id"
      " FROM movement_requests r"
      " WHERE ($1 = '' OR r.request_state = $1) AND ($2 = '' OR r.template_key = $2)"
      "   AND (NULLIF($6, '') IS NULL OR r.created_at >= NULLIF($6, '')::timestamptz)"
      "   AND (NULLIF($7, '') IS NULL OR r.created_at < NULLIF($7, '')::timestamptz)"
      "   AND ($3::bigint IS NULL OR (r.created_at, r.id) <"
      "        (timestamptz 'epoch' + $3::bigint * interval '1 microsecond', $4::uuid))"
      " ORDER BY r.created_at DESC, r.id DESC LIMIT $5"};
  auto k = keyset_of(after);
  return page_of(
      exec(tx, q, state, template_key, k.micros(), k.id(), limit + 1, created.from, created.to),
      limit);
}

std::optional<std::string> admin_movement_json(pqxx::transaction_base& tx, const std::string& id) {
  // The DAG comes from the plan the request was compiled from (its template
  // version), so it stays right after newer versions are loaded.
  static const statement q{
      "mg_admin_movement_json",
      "SELECT json_build_object('id', r.id, 'template_key', r.template_key,"
      " 'template_version', r.template_version, 'compiled_plan_hash', r.compiled_plan_hash,"
      " 'request_state', r.request_state, 'approval_status', r.approval_status,"
      " 'approved_by', r.approved_by, 'created_by', r.created_by, 'intent', r.intent,"
      " 'input_params', r.input_params, 'current_frontier', to_json(r.current_frontier),"
      " 'callback_url', r.callback_url, 'dispatch_paused', r.dispatch_paused,"
      " 'expires_at', r.expires_at, 'created_at', r.created_at, 'updated_at', r.updated_at,"
      " 'nodes', COALESCE((SELECT json_agg(json_build_object("
      "   'node_key', n.node_key, 'node_kind', n.node_kind, 'action_type', n.action_type,"
      "   'executor_key', n.executor_key, 'node_state', n.node_state, 'attempt_no', n.attempt_no,"
      "   'provider_state', n.provider_state, 'provider_refs', n.provider_refs,"
      "   'provider_ref_id', n.provider_ref_id, 'error_code', n.error_code,"
      "   'error_detail', n.error_detail, 'observe_count', n.observe_count,"
      "   'next_observe_at', n.next_observe_at, 'claimed_by', n.claimed_by,"
      "   'started_at', n.started_at, 'updated_at', n.updated_at,"
      "   'artifacts', COALESCE((SELECT json_agg(json_build_object('kind', a.kind,"
      "       'attempt_no', a.attempt_no, 'created_at', a.created_at, 'payload', a.payload)"
      "       ORDER BY a.created_at, a.id)"
      "     FROM node_artifacts a WHERE a.node_id = n.id), '[]'::json))"
      "   ORDER BY n.position)"
      "  FROM movement_request_nodes n WHERE n.request_id = r.id), '[]'::json),"
      " 'dag', json_build_object("
      "   'nodes', COALESCE((SELECT json_agg(json_build_object('node_key', p.node->>'node_key',"
      "       'action_type', p.node->>'action_type', 'node_state', n.node_state) ORDER BY p.ord)"
      "     FROM jsonb_array_elements(t.plan->'nodes') WITH ORDINALITY AS p(node, ord)"
      "     LEFT JOIN movement_request_nodes n"
      "       ON n.request_id = r.id AND n.node_key = p.node->>'node_key'), '[]'::json),"
      "   'edges', COALESCE(t.plan->'edges', '[]'::jsonb)),"
      " 'events', COALESCE((SELECT json_agg(json_build_object('id', e.id, 'seq', e.seq,"
      "     'event_type', e.event_type, 'node_key', e.node_key, 'payload', e.payload,"
      "     'occurred_at', e.occurred_at) ORDER BY e.seq)"
      "   FROM (SELECT * FROM movement_events WHERE request_id = r.id"
      "         ORDER BY seq DESC LIMIT $2) e), '[]'::json),"
      " 'events_truncated', (SELECT count(*) > $2 FROM movement_events WHERE request_id = r.id)"
      ")::text"
      " FROM movement_requests r"
      " JOIN templates t ON t.template_key = r.template_key AND t.version = r.template_version"
      " WHERE r.id = $1::uuid"};
  auto r = exec(tx, q, id, admin_event_limit);
  if (r.empty())
    return std::nullopt;
  return std::string(r[0][0].c_str());
}

std::string cluster_nodes_json(pqxx::transaction_base& tx) {
  static const statement q{
      "mg_cluster_nodes_json",
      "SELECT COALESCE(json_agg(json_build_object('runtime_node', runtime_node, 'host', host,"
      "  'cluster_port', cluster_port, 'started_at', started_at, 'last_seen_at', last_seen_at,"
      "  'last_seen_age_seconds',"
      "    round(extract(epoch FROM now() - last_seen_at)::numeric, 3))"
      "  ORDER BY runtime_node), '[]'::json)::text FROM cluster_nodes"};
  return str(exec(tx, q)[0][0]);
}

} // namespace mg::db
