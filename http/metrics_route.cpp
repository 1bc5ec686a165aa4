#include "http/metrics_route.hpp"

#include "services/database_metrics.hpp"

namespace mg::http {

using metrics::kind;

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

std::string render_metrics(services::service_context& ctx) {
  auto families = metrics::registry::global().collect();
  auto database = services::database_metric_families(ctx);
  families.push_back({"movegate_database_up",
                      "1 when the scrape could read PostgreSQL.",
                      kind::gauge,
                      {{"", {}, database.empty() ? 0.0 : 1.0}}});
  for (auto& f : database)
    families.push_back(std::move(f));
  // After the read, so the scrape's own lease shows as idle again.
  for (auto& f : services::pool_metric_families(ctx))
    families.push_back(std::move(f));
  return metrics::render(families);
}

admin_route metrics_route(services::service_context& ctx) {
  return {"GET", "/metrics", true, [&ctx](const admin_request&) {
            return api::reply{200,
                              render_metrics(ctx),
                              {{"Content-Type", "text/plain; version=0.0.4; charset=utf-8"}}};
          }};
}

} // namespace mg::http
