// openapi/openapi.json (as embedded in the binary) against the routes the
// listeners actually serve: every /v3 route of http::v3_routes and every
// admin route is described with its method, and every described operation
// is served. (tests/e2e/metrics_test.cpp validates the served document with
// a real OpenAPI validator.)
#include <boost/test/unit_test.hpp>

#include <regex>
#include <set>

#include "domain/json.hpp"
#include "http/admin_page.hpp"
#include "http/admin_views.hpp"
#include "http/api_relay.hpp"
#include "http/callback_admin.hpp"
#include "http/metrics_route.hpp"
#include "http/openapi.hpp"
#include "http/routes.hpp"

using namespace mg;

namespace {

/// "GET /v3/movements/{}": path parameters and regex captures both become {}.
std::string normalise(const std::string& method, const std::string& path) {
  static const std::regex param(R"(\{[^}]*\}|\([^)]*\))");
  return method + " " + std::regex_replace(path, param, "{}");
}

std::string upper(std::string s) {
  for (auto& ch : s)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

/// Every (method, path) the document describes.
std::set<std::string> described() {
  auto doc = json::parse(http::openapi_document());
  BOOST_REQUIRE(doc && doc->IsObject() && doc->HasMember("paths"));
  std::set<std::string> out;
  for (auto& p : (*doc)["paths"].GetObject())
    for (auto& m : p.value.GetObject())
      if (std::string(m.name.GetString()) != "parameters")
        out.insert(normalise(upper(m.name.GetString()), p.name.GetString()));
  return out;
}

/// The services and context behind the route tables; their handlers are
/// never called here, so nothing connects to a database.
struct route_tables {
  config::settings settings;
  db::connection_pool pool{"postgresql://unused", 1};
  db::plan_cache plans;
  services::service_context ctx{pool, settings, plans, {}, nullptr};
  services::movement_service movements{ctx};
  services::catalog_service catalog{ctx};
  services::balance_service balances{ctx, {}};
  http::api_server relay_target{settings, {}, ctx, {}}; // never started

  std::set<std::string> v3() {
    std::set<std::string> out;
    for (auto& r : http::v3_routes(movements, catalog, balances))
      out.insert(normalise(r.method, r.pattern));
    return out;
  }

  std::set<std::string> admin() {
    // Served by admin_server itself.
    std::set<std::string> out{"GET /healthz", "GET /readyz", "GET /admin/workers"};
    std::vector<http::admin_route> routes = http::admin_view_routes(ctx);
    for (auto& r : http::admin_page_routes())
      routes.push_back(r);
    for (auto& r : http::callback_admin_routes(ctx))
      routes.push_back(r);
    routes.push_back(http::metrics_route(ctx));
    for (auto& r : http::api_relay_routes(relay_target))
      routes.push_back(r);
    for (auto& r : routes)
      out.insert(normalise(r.method, r.pattern));
    return out;
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(openapi_description)

BOOST_AUTO_TEST_CASE(is_openapi_3_0_with_the_auth_schemes) {
  auto doc = json::parse(http::openapi_document());
  BOOST_REQUIRE(doc && doc->IsObject());
  std::string version = json::get_string(*doc, "openapi");
  BOOST_TEST(version.rfind("3.0.", 0) == 0, "openapi: " << version);
  auto& schemes = (*doc)["components"]["securitySchemes"];
  for (const char* header : {"X-QTG-Key-Id", "X-QTG-Timestamp", "X-QTG-Nonce", "X-QTG-Signature"}) {
    bool found = false;
    for (auto& s : schemes.GetObject())
      found = found ||
              (s.value.HasMember("name") && std::string(s.value["name"].GetString()) == header);
    BOOST_TEST(found, header << " is a security scheme");
  }
  BOOST_TEST(json::get_string(schemes["adminToken"], "scheme") == "bearer");
  BOOST_TEST((*doc)["components"]["schemas"].HasMember("Error"));
}

BOOST_AUTO_TEST_CASE(every_v3_route_is_described_and_every_v3_operation_served) {
  route_tables t;
  auto served = t.v3();
  auto doc = described();
  for (auto& r : served)
    BOOST_TEST(doc.count(r) == 1u, r << " is served but not described");
  for (auto& d : doc)
    if (d.find(" /v3") != std::string::npos)
      BOOST_TEST(served.count(d) == 1u, d << " is described but not served");
}

BOOST_AUTO_TEST_CASE(every_admin_route_is_described) {
  route_tables t;
  auto doc = described();
  for (auto& r : t.admin())
    BOOST_TEST(doc.count(r) == 1u, r << " is served but not described");
  BOOST_TEST(doc.count("GET /openapi.json") == 1u);
}

BOOST_AUTO_TEST_CASE(every_v3_operation_documents_the_spec_statuses) {
  auto doc = json::parse(http::openapi_document());
  for (auto& p : (*doc)["paths"].GetObject()) {
    if (std::string(p.name.GetString()).rfind("/v3", 0) != 0)
      continue;
    for (auto& m : p.value.GetObject()) {
      auto& responses = m.value["responses"];
      for (const char* status : {"400", "401", "403", "429", "503"})
        BOOST_TEST(responses.HasMember(status),
                   p.name.GetString() << " " << m.name.GetString() << " lacks " << status);
      bool has_path_id = std::string(p.name.GetString()).find('{') != std::string::npos;
      if (has_path_id)
        BOOST_TEST(responses.HasMember("404"), p.name.GetString() << " lacks 404");
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
