#include "http/callback_admin.hpp"

#include <stdexcept>

#include "domain/movement_requests.hpp"
#include "services/callback_service.hpp"

namespace mg::http {

namespace {

constexpr int default_limit = 50;
constexpr int max_limit = 200;

std::string query_value(const admin_request& req, const char* name) {
  auto it = req.query.find(name);
  return it == req.query.end() ? std::string() : it->second;
}

/// 1..200 as plain digits, else nullopt.
std::optional<int> parse_limit(const std::string& raw) {
  if (raw.empty())
    return default_limit;
  if (raw.size() > 3 || raw.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  int v = std::stoi(raw);
  if (v < 1 || v > max_limit)
    return std::nullopt;
  return v;
}

api::reply list(services::service_context& ctx, const admin_request& req) {
  for (const auto& [k, _] : req.query)
    if (k != "status" && k != "limit" && k != "cursor")
      return api::error_reply(api::bad_request("unknown query parameter", {{k, "not allowed"}}));
  auto status = query_value(req, "status");
  if (!status.empty() && status != "pending" && status != "sent" && status != "dlq")
    return api::error_reply(
        api::bad_request("invalid status", {{"status", "must be pending, sent or dlq"}}));
  auto limit = parse_limit(query_value(req, "limit"));
  if (!limit)
    return api::error_reply(api::bad_request("invalid limit", {{"limit", "must be 1..200"}}));
  auto cursor = query_value(req, "cursor");
  if (!cursor.empty() && !domain::is_uuid(cursor))
    return api::error_reply(api::bad_request("invalid cursor", {{"cursor", "not a cursor"}}));
  return services::list_callbacks(ctx.pool, status, *limit, cursor);
}

api::reply redeliver(services::service_context& ctx, const admin_request& req) {
  return services::redeliver_callback(ctx.pool, req.params.at(0), "admin-token");
}

} // namespace

std::vector<admin_route> callback_admin_routes(services::service_context& ctx) {
  std::vector<admin_route> routes;
  routes.push_back({"GET", "/admin/callbacks", true, [&ctx](const admin_request& req) {
                      return list(ctx, req);
                    }});
  routes.push_back(
      {"POST", "/admin/callbacks/([^/]+)/redeliver", true, [&ctx](const admin_request& req) {
         return redeliver(ctx, req);
       }});
  return routes;
}

} // namespace mg::http
