#include "http/callback_admin.hpp"

#include <stdexcept>

#include "domain/json_writer.hpp"
#include "domain/movement_requests.hpp"
#include "persistence/callback_store.hpp"
#include "persistence/db.hpp"

namespace mg::http {

namespace {

constexpr int default_limit = 50;
constexpr int max_limit = 200;

/// Runs `body` on a pooled connection; a lost database answers 503.
template <class F> api::reply on_pool(db::connection_pool& pool, F&& body) {
  try {
    auto lease = pool.acquire();
    try {
      return body(*lease);
    } catch (const std::exception& e) {
      if (db::is_connection_error(e) || !lease->is_open()) {
        lease.discard();
        return api::error_reply(api::unavailable());
      }
      throw;
    }
  } catch (const pqxx::broken_connection&) {
    return api::error_reply(api::unavailable());
  }
}

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

api::reply list(db::connection_pool& pool, const admin_request& req) {
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
  return on_pool(pool, [&](pqxx::connection& c) {
    db::callback_page page;
    try {
      page = db::list_callbacks(c, status, *limit, cursor);
    } catch (const std::invalid_argument&) {
      return api::error_reply(api::bad_request("invalid cursor", {{"cursor", "not a cursor"}}));
    }
    json::writer body;
    body.begin_object().key("items").begin_array();
    for (const auto& item : page.items)
      body.raw(item);
    body.end_array().member_or_null("next_cursor", page.next_cursor).end_object();
    return api::reply{200, body.str(), {}};
  });
}

api::reply redeliver(db::connection_pool& pool, const admin_request& req) {
  const auto& id = req.params.at(0);
  if (!domain::is_uuid(id))
    return api::error_reply(api::not_found("no such callback"));
  return on_pool(pool, [&](pqxx::connection& c) {
    auto r = db::redeliver_callback(c, id, "admin-token");
    switch (r.status) {
    case db::redeliver_status::not_found:
      return api::error_reply(api::not_found("no such callback"));
    case db::redeliver_status::already_pending:
      return api::error_reply(api::conflict("callback is already pending delivery"));
    case db::redeliver_status::done:
      break;
    }
    return api::reply{200, r.row, {}};
  });
}

} // namespace

std::vector<admin_route> callback_admin_routes(db::connection_pool& pool) {
  std::vector<admin_route> routes;
  routes.push_back({"GET", "/admin/callbacks", true, [&pool](const admin_request& req) {
                      return list(pool, req);
                    }});
  routes.push_back(
      {"POST", "/admin/callbacks/([^/]+)/redeliver", true, [&pool](const admin_request& req) {
         return redeliver(pool, req);
       }});
  return routes;
}

} // namespace mg::http
