#include "http/admin_views.hpp"

#include <regex>
#include <set>
#include <variant>

#include "domain/movement_requests.hpp"
#include "domain/states.hpp"
#include "services/admin_view_service.hpp"

namespace mg::http {

namespace {

/// A time with its zone (no zone would mean the server's): what
/// `Date.toISOString()` writes, seconds and fraction optional.
bool is_iso_time(const std::string& s) {
  static const std::regex iso(
      R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))");
  return s.size() <= 40 && std::regex_match(s, iso);
}

using services::movement_filter;

/// The list's parameters, every problem listed at once; a parameter that is
/// unknown or repeated is refused so a typo never silently widens the list.
std::variant<movement_filter, api::error> parse_filter(const admin_request& req) {
  static const std::set<std::string> allowed{"state",      "template_key", "created_from",
                                             "created_to", "limit",        "cursor"};
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
    else if (key == "created_from")
      f.created.from = value;
    else if (key == "created_to")
      f.created.to = value;
    else if (key == "limit")
      limit = value;
    else if (!value.empty() && !(f.cursor = domain::decode_cursor(value)))
      bad.push_back({"cursor", "malformed cursor"});
  }
  if (!f.state.empty() && !domain::parse_request_state(f.state))
    bad.push_back({"state", "unknown request state"});
  for (const auto& [name, value] :
       {std::pair{"created_from", f.created.from}, std::pair{"created_to", f.created.to}})
    if (!value.empty() && !is_iso_time(value))
      bad.push_back({name, "must be an ISO 8601 time with a zone, e.g. 2026-01-31T12:00:00Z"});
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

/// Admin data is live: never cached by the browser or a proxy.
api::reply no_store(api::reply r) {
  if (r.status == 200)
    r.headers.push_back({"Cache-Control", "no-store"});
  return r;
}

api::reply list_movements(services::service_context& ctx, const admin_request& req) {
  auto parsed = parse_filter(req);
  if (auto* e = std::get_if<api::error>(&parsed))
    return api::error_reply(*e);
  return no_store(services::admin_movements(ctx, std::get<services::movement_filter>(parsed)));
}

api::reply show_movement(services::service_context& ctx, const admin_request& req) {
  return no_store(services::admin_movement(ctx, req.params.at(0)));
}

api::reply cluster(services::service_context& ctx) {
  return no_store(services::cluster_nodes(ctx));
}

} // namespace

std::vector<admin_route> admin_view_routes(services::service_context& ctx) {
  services::service_context* c = &ctx;
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
