#include "http/api_relay.hpp"

#include <strings.h>

namespace mg::http {

namespace {

constexpr size_t relay_body_bytes = 1024 * 1024; // as on /v3 (SPEC §5)

bool signature_header(const std::string& name) {
  return strncasecmp(name.c_str(), "X-QTG-", 6) == 0;
}

api::reply relay(api_server& api, const admin_request& req) {
  const std::string prefix = relay_prefix;
  relayed_request r;
  r.method = req.method;
  // The target as sent, minus the prefix: what the client signed.
  r.target = req.target.rfind(prefix, 0) == 0 ? req.target.substr(prefix.size()) : "";
  for (const auto& [name, value] : req.headers)
    if (signature_header(name))
      r.headers.emplace_back(name, value);
  r.body = req.body;
  return api.answer_relayed(r);
}

} // namespace

std::vector<admin_route> api_relay_routes(api_server& api) {
  api_server* a = &api;
  std::vector<admin_route> routes;
  for (const char* method : {"GET", "POST", "PUT"}) {
    admin_route r;
    r.method = method;
    r.pattern = std::string(relay_prefix) + "/(.*)";
    r.needs_token = true;
    r.max_body_bytes = relay_body_bytes;
    r.handle = [a](const admin_request& req) {
      return relay(*a, req);
    };
    routes.push_back(std::move(r));
  }
  return routes;
}

} // namespace mg::http
