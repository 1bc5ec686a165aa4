#include "http/metrics_route.hpp"

#include <limits>
#include <map>

#include "config/log.hpp"
#include "domain/states.hpp"
#include "services/health_service.hpp"

namespace mg::http {

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

std::vector<family> read_database_families(db::connection_pool& pool,
                                           const std::string& network_class, double lease_seconds) {
  auto snapshot = services::read_metrics(pool, network_class, lease_seconds);
  return snapshot ? database_families(*snapshot) : std::vector<family>{};
}

} // namespace

const char* response_class(int status) {
  if (status == 429)
    return "429";
  if (status >= 500)
    return "5xx";
  if (status >= 400)
    return "4xx";
  if (status >= 300)
    return "3xx";
  return "2xx";
}

metrics::counter& response_counter(const std::string& listener, const char* cls) {
  return metrics::registry::global().get_counter(
      "movegate_http_responses_total",
      "HTTP responses by class (2xx, 3xx, 429, other 4xx, 5xx); every class exists from start.",
      {{"listener", listener}, {"class", cls}});
}

void init_http_response_classes(const std::string& listener) {
  for (const char* cls : {"2xx", "3xx", "4xx", "429", "5xx"})
    response_counter(listener, cls);
}

void record_http_request(const std::string& listener, const std::string& method,
                         const std::string& route, int status,
                         std::chrono::steady_clock::time_point started) {
  auto& r = metrics::registry::global();
  const metrics::labels l{{"listener", listener},
                          {"method", method},
                          {"route", route.empty() ? "unmatched" : route},
                          {"status", std::to_string(status)}};
  r.get_counter("movegate_http_requests_total", "HTTP requests answered.", l).inc();
  response_counter(listener, response_class(status)).inc();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  r.get_histogram("movegate_http_request_duration_seconds", "Time to answer an HTTP request.",
                  metrics::duration_buckets(), {l[0], l[1], l[2]})
      .observe(seconds);
}

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
  out.push_back(latency_family("movegate_dispatch_latency_seconds",
                               "Approval to first submit of requests, quantiles over the last " +
                                   std::to_string(db::latency_window_seconds) + " s.",
                               s.dispatch));
  out.push_back(gauge_family("movegate_dispatch_latency_samples",
                             "Requests the dispatch latency quantiles were computed from.",
                             static_cast<double>(s.dispatch.samples)));
  out.push_back(latency_family("movegate_observe_latency_seconds",
                               "Node SUBMITTED to COMPLETED, quantiles over the last " +
                                   std::to_string(db::latency_window_seconds) + " s.",
                               s.observe));
  out.push_back(gauge_family("movegate_observe_latency_samples",
                             "Nodes the observe latency quantiles were computed from.",
                             static_cast<double>(s.observe.samples)));
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

std::string render_metrics(db::connection_pool& pool, const std::string& network_class,
                           double lease_seconds) {
  auto families = metrics::registry::global().collect();
  auto database = read_database_families(pool, network_class, lease_seconds);
  families.push_back({"movegate_database_up",
                      "1 when the scrape could read PostgreSQL.",
                      kind::gauge,
                      {{"", {}, database.empty() ? 0.0 : 1.0}}});
  for (auto& f : database)
    families.push_back(std::move(f));
  // After the read, so the scrape's own lease shows as idle again.
  for (auto& f : pool_families(pool.current_usage()))
    families.push_back(std::move(f));
  return metrics::render(families);
}

admin_route metrics_route(db::connection_pool& pool, std::string network_class,
                          double lease_seconds) {
  return {"GET", "/metrics", true, [&pool, network_class, lease_seconds](const admin_request&) {
            return api::reply{200,
                              render_metrics(pool, network_class, lease_seconds),
                              {{"Content-Type", "text/plain; version=0.0.4; charset=utf-8"}}};
          }};
}

} // namespace mg::http
