#include "persistence/metrics_store.hpp"

#include "persistence/db.hpp"

namespace mg::db {

namespace {

// Counts and ages in one round trip: (kind, label, label2, value) rows.
// The two ages walk their partial indexes (nodes_dispatch_ready,
// callback_outbox_pending) in order and stop after $2 rows.
const statement counts_query{
    "mg_metrics_counts",
    "SELECT 'request', request_state, '', count(*)::float8 FROM movement_requests"
    "  GROUP BY request_state"
    " UNION ALL SELECT 'node', node_state, '', count(*)::float8 FROM movement_request_nodes"
    "  GROUP BY node_state"
    " UNION ALL SELECT 'callback', status, '', count(*)::float8 FROM movement_callback_outbox"
    "  GROUP BY status"
    " UNION ALL SELECT 'callback_attempts', status, '', coalesce(sum(attempts), 0)::float8"
    "  FROM movement_callback_outbox GROUP BY status"
    " UNION ALL SELECT 'audit_pending', '', '', count(*)::float8 FROM audit_outbox"
    "  WHERE promoted_at IS NULL"
    " UNION ALL SELECT 'ready_age', '', '', coalesce(max(extract(epoch FROM"
    "  clock_timestamp() - updated_at)), 0)::float8 FROM (SELECT updated_at"
    "  FROM movement_request_nodes WHERE node_state = 'READY'"
    "   AND action_type NOT LIKE 'manual\\_%' ORDER BY request_created_at, position"
    "   LIMIT $2) ready"
    " UNION ALL SELECT 'callback_lag', '', '', coalesce(max(extract(epoch FROM"
    "  clock_timestamp() - created_at)), 0)::float8 FROM (SELECT created_at, next_attempt_at"
    "  FROM movement_callback_outbox WHERE status = 'pending' ORDER BY created_at"
    "   LIMIT $2) pending WHERE coalesce(next_attempt_at, created_at) <= clock_timestamp()"
    " UNION ALL SELECT 'cluster', CASE WHEN last_seen_at >= clock_timestamp()"
    "  - make_interval(secs => $1) THEN 'live' ELSE 'expired' END, '', count(*)::float8"
    "  FROM cluster_nodes GROUP BY 2"};

// One row per worker of this network class.
const statement heartbeats_query{
    "mg_metrics_heartbeats",
    "SELECT worker_name, runtime_node, worker_group,"
    "  greatest(extract(epoch FROM clock_timestamp() - last_heartbeat_at), 0)::float8,"
    "  consecutive_errors::float8"
    " FROM worker_heartbeats WHERE network_class = $1"};

// Latencies from the events of requests created in the last hour (an
// indexed range; an approval later than that is not sampled), over the
// last `latency_window_seconds`.
const statement latency_query{
    "mg_metrics_latency",
    "WITH recent AS (SELECT id FROM movement_requests"
    "   WHERE created_at > now() - interval '1 hour'),"
    " ev AS (SELECT e.request_id, e.event_type, e.node_key, e.payload->>'node_state' AS node_state,"
    "   e.occurred_at FROM movement_events e JOIN recent r ON r.id = e.request_id),"
    " approved AS (SELECT request_id, min(occurred_at) AS at FROM ev"
    "   WHERE event_type = 'request_approved' GROUP BY request_id),"
    " dispatch AS (SELECT extract(epoch FROM min(s.occurred_at) - a.at)::float8 AS lat"
    "   FROM approved a JOIN ev s ON s.request_id = a.request_id"
    "    AND s.event_type = 'node_state_changed' AND s.node_state = 'SUBMITTING'"
    "   GROUP BY a.request_id, a.at"
    "   HAVING min(s.occurred_at) > now() - make_interval(secs => $1)),"
    " observe AS (SELECT extract(epoch FROM c.occurred_at - min(s.occurred_at))::float8 AS lat"
    "   FROM ev c JOIN ev s ON s.request_id = c.request_id AND s.node_key = c.node_key"
    "    AND s.node_state = 'SUBMITTED' AND s.occurred_at <= c.occurred_at"
    "   WHERE c.node_state = 'COMPLETED' AND c.occurred_at > now() - make_interval(secs => $1)"
    "   GROUP BY c.request_id, c.node_key, c.occurred_at)"
    " SELECT 'dispatch', percentile_cont(0.5) WITHIN GROUP (ORDER BY lat),"
    "   percentile_cont(0.95) WITHIN GROUP (ORDER BY lat), count(*) FROM dispatch"
    " UNION ALL SELECT 'observe', percentile_cont(0.5) WITHIN GROUP (ORDER BY lat),"
    "   percentile_cont(0.95) WITHIN GROUP (ORDER BY lat), count(*) FROM observe"};

std::optional<double> opt_double(const pqxx::field& f) {
  if (f.is_null())
    return std::nullopt;
  return f.as<double>();
}

} // namespace

metrics_snapshot read_metrics(pqxx::connection& c, const std::string& network_class,
                              double lease_seconds) {
  metrics_snapshot m;
  pqxx::read_transaction tx(c);
  for (const auto& row : exec(tx, counts_query, lease_seconds, age_scan_rows)) {
    const std::string kind = row[0].c_str();
    const std::string label = str(row[1]);
    const double value = row[3].as<double>();
    if (kind == "request")
      m.requests_by_state.push_back({label, value});
    else if (kind == "node")
      m.nodes_by_state.push_back({label, value});
    else if (kind == "callback")
      m.callbacks_by_status.push_back({label, value});
    else if (kind == "callback_attempts")
      m.callback_attempts_by_status.push_back({label, value});
    else if (kind == "audit_pending")
      m.audit_outbox_pending = value;
    else if (kind == "ready_age")
      m.oldest_ready_age_seconds = value;
    else if (kind == "callback_lag")
      m.callback_lag_seconds = value;
    else if (kind == "cluster")
      (label == "live" ? m.cluster_members_live : m.cluster_members_expired) = value;
  }
  for (const auto& row : exec(tx, heartbeats_query, network_class))
    m.heartbeats.push_back(
        {str(row[0]), str(row[1]), str(row[2]), row[3].as<double>(), row[4].as<double>()});
  for (const auto& row : exec(tx, latency_query, latency_window_seconds)) {
    latency_quantiles q{opt_double(row[1]), opt_double(row[2]), row[3].as<long>()};
    (std::string(row[0].c_str()) == "dispatch" ? m.dispatch : m.observe) = q;
  }
  tx.commit();
  return m;
}

} // namespace mg::db
