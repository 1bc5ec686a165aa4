#include "http/routes.hpp"

#include <memory>
#include <set>
#include <variant>

#include "services/balance_service.hpp"

namespace mg::http {

namespace {

using api::scope;

/// The paging parameters of a list call; any other parameter, or one given
/// twice, is refused so a typo never silently widens a query.
std::variant<services::list_query, api::reply> list_params(const call& c,
                                                           const std::set<std::string>& allowed) {
  services::list_query q;
  std::set<std::string> seen;
  for (auto& [key, value] : c.query) {
    if (!allowed.count(key))
      return api::error_reply(
          api::bad_request("unknown query parameter", {{key, "not a parameter of this call"}}));
    if (!seen.insert(key).second)
      return api::error_reply(api::bad_request("query parameter given twice", {{key, "repeated"}}));
    if (key == "state")
      q.state = value;
    else if (key == "limit")
      q.limit = value;
    else if (key == "cursor")
      q.cursor = value;
  }
  return q;
}

template <class F>
std::function<api::reply(const call&)> with_list(std::set<std::string> allowed, F f) {
  return [allowed = std::move(allowed), f](const call& c) {
    auto q = list_params(c, allowed);
    if (auto* refused = std::get_if<api::reply>(&q))
      return *refused;
    return f(c, std::get<services::list_query>(q));
  };
}

/// Calls that take no parameters refuse any query string.
template <class F> std::function<api::reply(const call&)> no_query(F f) {
  return with_list({}, [f](const call& c, const services::list_query&) { return f(c); });
}

} // namespace

std::vector<route> v3_routes(services::movement_service& m, services::catalog_service& cat,
                             services::balance_service& balances) {
  std::vector<route> r;
  auto add = [&](const char* method, const char* pattern, scope s, bool body,
                 std::function<api::reply(const call&)> f) {
    r.push_back({method, pattern, s, body, std::move(f)});
  };
  add("POST", "/v3/movements", scope::create, true,
      no_query([&m](const call& c) { return m.create(c.who, c.json, c.members); }));
  add("GET", "/v3/movements", scope::read, false,
      with_list({"state", "limit", "cursor"},
                [&m](const call& c, const services::list_query& q) { return m.list(c.who, q); }));
  add("GET", "/v3/movements/{id}", scope::read, false,
      no_query([&m](const call& c) { return m.get(c.who, c.params[0]); }));
  add("GET", "/v3/movements/{id}/events", scope::read, false,
      with_list({"limit", "cursor"}, [&m](const call& c, const services::list_query& q) {
        return m.events(c.who, c.params[0], q);
      }));
  using transition = api::reply (services::movement_service::*)(
      const api::caller&, const std::string&, const json::value&);
  const std::pair<const char*, transition> transitions[] = {
      {"/v3/movements/{id}/approve", &services::movement_service::approve},
      {"/v3/movements/{id}/reject", &services::movement_service::reject},
      {"/v3/movements/{id}/cancel", &services::movement_service::cancel},
      {"/v3/movements/{id}/resume", &services::movement_service::resume},
      {"/v3/movements/{id}/retry", &services::movement_service::retry},
  };
  for (auto& [pattern, call_member] : transitions)
    add("POST", pattern, scope::approve, true, no_query([&m, f = call_member](const call& c) {
          return (m.*f)(c.who, c.params[0], c.json);
        }));
  add("POST", "/v3/movements/{id}/nodes/{node_key}/complete", scope::approve, true,
      no_query(
          [&m](const call& c) { return m.complete(c.who, c.params[0], c.params[1], c.json); }));

  add("GET", "/v3/templates", scope::read, false,
      with_list({"limit", "cursor"}, [&cat](const call& c, const services::list_query& q) {
        return cat.list_templates(c.who, q);
      }));
  add("GET", "/v3/templates/{key}", scope::read, false,
      no_query([&cat](const call& c) { return cat.get_template(c.who, c.params[0]); }));
  add("POST", "/v3/template-proposals", scope::admin, true,
      no_query([&cat](const call& c) { return cat.propose_template(c.who, c.json); }));
  add("POST", "/v3/template-proposals/{id}/approve", scope::admin, true,
      no_query([&cat](const call& c) { return cat.approve_proposal(c.who, c.params[0], c.json); }));
  add("POST", "/v3/template-proposals/{id}/reject", scope::admin, true,
      no_query([&cat](const call& c) { return cat.reject_proposal(c.who, c.params[0], c.json); }));
  add("GET", "/v3/executors", scope::read, false,
      no_query([&cat](const call& c) { return cat.list_executors(c.who); }));
  add("GET", "/v3/signers", scope::read, false,
      no_query([&cat](const call& c) { return cat.list_signers(c.who); }));
  add("PUT", "/v3/signers/{signer_key}/expected-identity", scope::admin, true,
      no_query(
          [&cat](const call& c) { return cat.put_expected_identity(c.who, c.params[0], c.json); }));
  add("GET", "/v3/balances", scope::read, false,
      [&balances](const call& c) { return balances.get(c.who, c.query); });
  return r;
}

} // namespace mg::http
