#include "http/admin_views.hpp"

#include <set>
#include <variant>

#include "domain/movement_requests.hpp"
#include "domain/states.hpp"
#include "persistence/admin_view_store.hpp"
#include "persistence/keyset_page.hpp"

namespace mg::http {

namespace {

/// Admin data is live: never cached by the browser or a proxy.
api::reply fresh_json(std::string body) {
  return {200, std::move(body), {{"Cache-Control", "no-store"}}};
}

struct movement_filter {
  std::string state;
  std::string template_key;
  int limit = 50;
  std::optional<domain::list_cursor> cursor;
};

/// The list's parameters, every problem listed at once; a parameter that is
/// unknown or repeated is refused so a typo never silently widens the list.
std::variant<movement_filter, api::error> parse_filter(const admin_request& req) {
  static const std::set<std::string> allowed{"state", "template_key", "limit", "cursor"};
  movement_filter f;
  std::vector<api::field_error> bad;
  std::set<std::string> seen;
  std::string limit;
  for (const auto& [key, value] : req.query) {
    if (!allowed.count(key)) {
      bad.push_back({key, "not a parameter of this call"});
      continue;
    }
    if (!seen.insert(key).second) {
      bad.push_back({key, "repeated"});
      continue;
    }
    if (key == "state")
      f.state = value;
    else if (key == "template_key")
      f.template_key = value;
    else if (key == "limit")
      limit = value;
    else if (!value.empty() && !(f.cursor = domain::decode_cursor(value)))
      bad.push_back({"cursor", "malformed cursor"});
  }
  if (!f.state.empty() && !domain::parse_request_state(f.state))
    bad.push_back({"state", "unknown request state"});
  if (f.template_key.size() > 200)
    bad.push_back({"template_key", "too long"});
  if (auto l = domain::parse_limit(limit))
    f.limit = *l;
  else
    bad.push_back({"limit", "must be an integer from 1 to 200"});
  if (!bad.empty())
    return api::bad_request("invalid query", std::move(bad));
  return f;
}

api::reply list_movements(api::service_context& ctx, const admin_request& req) {
  auto parsed = parse_filter(req);
  if (auto* e = std::get_if<api::error>(&parsed))
    return api::error_reply(*e);
  const auto& f = std::get<movement_filter>(parsed);
  return api::with_connection(ctx, [&](pqxx::connection& c) {
    pqxx::read_transaction tx(c);
    auto page = db::admin_list_movements(tx, f.state, f.template_key, f.limit, f.cursor);
    return fresh_json(db::page_body(page));
  });
}

api::reply show_movement(api::service_context& ctx, const admin_request& req) {
  const std::string& id = req.params.at(0);
  if (!domain::is_uuid(id))
    return api::error_reply(api::not_found("no movement " + id));
  return api::with_connection(ctx, [&](pqxx::connection& c) {
    pqxx::read_transaction tx(c);
    auto body = db::admin_movement_json(tx, id);
    return body ? fresh_json(*body) : api::error_reply(api::not_found("no movement " + id));
  });
}

api::reply cluster(api::service_context& ctx) {
  return api::with_connection(ctx, [&](pqxx::connection& c) {
    pqxx::read_transaction tx(c);
    return fresh_json(db::cluster_nodes_json(tx));
  });
}

} // namespace

std::vector<admin_route> admin_view_routes(api::service_context& ctx) {
  api::service_context* c = &ctx;
  return {
      {"GET", "/admin/movements", true,
       [c](const admin_request& r) {
         return list_movements(*c, r);
       }},
      {"GET", "/admin/movements/([^/]+)", true,
       [c](const admin_request& r) {
         return show_movement(*c, r);
       }},
      {"GET", "/admin/cluster", true,
       [c](const admin_request&) {
         return cluster(*c);
       }},
  };
}

} // namespace mg::http
