#include "services/database_metrics.hpp"

#include <limits>
#include <map>

#include "domain/states.hpp"
#include "services/health_service.hpp"

namespace mg::services {

namespace {

using metrics::family;
using metrics::kind;

/// Zero for every name in `known`, then the counted values (so a state
/// with no rows still has a series).
family by_label(const std::string& name, const std::string& help, const std::string& label,
                const std::vector<std::string>& known,
                const std::vector<db::labelled_value>& rows) {
  std::map<std::string, double> values;
  for (auto& k : known)
    values[k] = 0;
  for (auto& r : rows)
    values[r.label] = r.value;
  family f{name, help, kind::gauge, {}};
  for (auto& [k, v] : values)
    f.samples.push_back({"", {{label, k}}, v});
  return f;
}

std::vector<std::string> request_states() {
  std::vector<std::string> out;
  for (int i = 0; i <= static_cast<int>(domain::request_state::cancelled); ++i)
    out.emplace_back(domain::to_string(static_cast<domain::request_state>(i)));
  return out;
}

std::vector<std::string> node_states() {
  std::vector<std::string> out;
  for (int i = 0; i <= static_cast<int>(domain::node_state::cancelled); ++i)
    out.emplace_back(domain::to_string(static_cast<domain::node_state>(i)));
  return out;
}

family gauge_family(const std::string& name, const std::string& help, double value) {
  return {name, help, kind::gauge, {{"", {}, value}}};
}

family latency_family(const std::string& name, const std::string& help,
                      const db::latency_quantiles& q) {
  // NaN when the window saw no sample (Prometheus' convention for "no value").
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {name,
          help,
          kind::gauge,
          {{"", {{"percentile", "50"}}, q.p50.value_or(nan)},
           {"", {{"percentile", "95"}}, q.p95.value_or(nan)}}};
}

/// movegate_<what>_latency_seconds (p50, p95 over the latency window) and
/// the count of samples they came from.
void add_latency(std::vector<family>& out, const std::string& what, const std::string& measured,
                 const std::string& sampled, const db::latency_quantiles& q) {
  out.push_back(latency_family("movegate_" + what + "_latency_seconds",
                               measured + ", quantiles over the last " +
                                   std::to_string(db::latency_window_seconds) + " s.",
                               q));
  out.push_back(gauge_family("movegate_" + what + "_latency_samples",
                             sampled + " the " + what + " latency quantiles were computed from.",
                             static_cast<double>(q.samples)));
}

/// Heartbeat age and errors in a row of every worker row.
std::vector<family> worker_families(const std::vector<db::heartbeat_age>& heartbeats) {
  family hb{"movegate_worker_heartbeat_age_seconds",
            "Seconds since each worker's last heartbeat row write.",
            kind::gauge,
            {}};
  family errors{"movegate_worker_consecutive_errors",
                "Failed passes in a row of each worker, as its last heartbeat row says.",
                kind::gauge,
                {}};
  for (auto& h : heartbeats) {
    const metrics::labels l{
        {"worker", h.worker}, {"runtime_node", h.runtime_node}, {"group", h.group}};
    hb.samples.push_back({"", l, h.age_seconds});
    errors.samples.push_back({"", l, h.consecutive_errors});
  }
  return {std::move(hb), std::move(errors)};
}

} // namespace

std::vector<family> database_families(const db::metrics_snapshot& s) {
  std::vector<family> out;
  out.push_back(by_label("movegate_requests", "Movement requests by state.", "state",
                         request_states(), s.requests_by_state));
  out.push_back(by_label("movegate_nodes", "Movement request nodes by state.", "state",
                         node_states(), s.nodes_by_state));
  out.push_back(by_label("movegate_callback_outbox",
                         "Callback outbox rows by status (pending = depth, sent and dlq = "
                         "delivery outcomes).",
                         "status", {"pending", "sent", "dlq"}, s.callbacks_by_status));
  out.push_back(by_label("movegate_callback_attempts",
                         "Delivery attempts of the callback outbox rows, by row status.", "status",
                         {"pending", "sent", "dlq"}, s.callback_attempts_by_status));
  out.push_back(gauge_family("movegate_audit_outbox_pending",
                             "Audit outbox rows not yet promoted to audit_events.",
                             s.audit_outbox_pending));
  for (auto& f : worker_families(s.heartbeats))
    out.push_back(std::move(f));
  out.push_back(gauge_family("movegate_oldest_ready_node_age_seconds",
                             "Longest time a dispatchable node has been READY (among the first " +
                                 std::to_string(db::age_scan_rows) + " in claim order).",
                             s.oldest_ready_age_seconds));
  out.push_back(gauge_family("movegate_callback_delivery_lag_seconds",
                             "Age of the oldest pending callback that is due (among the " +
                                 std::to_string(db::age_scan_rows) + " oldest pending).",
                             s.callback_lag_seconds));
  out.push_back({"movegate_cluster_members",
                 "cluster_nodes rows: live, or expired (lease run out, not yet taken over).",
                 kind::gauge,
                 {{"", {{"state", "expired"}}, s.cluster_members_expired},
                  {"", {{"state", "live"}}, s.cluster_members_live}}});
  add_latency(out, "dispatch", "Approval to first submit of requests", "Requests", s.dispatch);
  add_latency(out, "observe", "Node SUBMITTED to COMPLETED", "Nodes", s.observe);
  return out;
}

std::vector<family> pool_families(const db::connection_pool::usage& u) {
  return {{"movegate_db_pool_connections",
           "API connection pool connections by state.",
           kind::gauge,
           {{"", {{"state", "in_use"}}, static_cast<double>(u.in_use)},
            {"", {{"state", "idle"}}, static_cast<double>(u.idle)}}},
          {"movegate_db_pool_max_connections",
           "Bound of the API connection pool.",
           kind::gauge,
           {{"", {}, static_cast<double>(u.max)}}}};
}

std::vector<family> database_metric_families(service_context& ctx) {
  auto snapshot =
      read_metrics(ctx.pool, ctx.settings.network_class, ctx.settings.cluster_lease_seconds);
  return snapshot ? database_families(*snapshot) : std::vector<family>{};
}

std::vector<family> pool_metric_families(service_context& ctx) {
  return pool_families(ctx.pool.current_usage());
}

} // namespace mg::services
