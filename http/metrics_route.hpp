#pragma once
// GET /metrics on the admin listener (bearer token, SPEC §5): the process's
// own series (workers, HTTP) plus what PostgreSQL holds, read at scrape
// time on one pooled connection, in the Prometheus text format 0.0.4.
#include <chrono>
#include <string>
#include <vector>

#include "config/metrics.hpp"
#include "http/admin_server.hpp"
#include "services/service_context.hpp"

namespace mg::http {

/// The class label of a status: "429" on its own (rate limiting), else
/// "2xx", "3xx", "4xx" or "5xx".
const char* response_class(int status);

/// Creates `listener`'s movegate_http_responses_total series at zero, so
/// rate() sees the first error of a class (a series born at 1 shows none).
void init_http_response_classes(const std::string& listener);

/// Counts one answered HTTP request and its duration. `route` is the
/// matched pattern ("" → "unmatched"), never the raw path, so the label
/// set stays bounded.
void record_http_request(const std::string& listener, const std::string& method,
                         const std::string& route, int status,
                         std::chrono::steady_clock::time_point started);

/// The whole exposition: process series, pool use and the database's
/// (when the database is unreachable: movegate_database_up 0 and no rows).
std::string render_metrics(services::service_context& ctx);

/// The /metrics admin route.
admin_route metrics_route(services::service_context& ctx);

} // namespace mg::http
