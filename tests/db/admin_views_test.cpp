// The admin listener's data routes behind the inspection page
// (http/admin_views): the movements list with its filters and keyset
// cursor, one movement with nodes, DAG, artifacts and events, the cluster
// nodes, refusals (400/404) and a lost database (503). Handlers are called
// directly; the bearer-token check is the admin listener's (api_server_test).
#include <boost/test/unit_test.hpp>

#include <set>

#include "domain/json.hpp"
#include "http/admin_views.hpp"
#include "services/service_context.hpp"
#include "tests/support/db_fixture.hpp"

using namespace mg;

namespace {

struct views_fixture : test::db_fixture {
  db::connection_pool pool{url, 2};
  db::plan_cache plans;
  services::service_context svc{pool, settings, plans, nullptr, nullptr};
  std::vector<http::admin_route> routes = http::admin_view_routes(svc);

  views_fixture() {
    add_template(R"({"template_key": "v_chain", "version": 1, "nodes": [
      {"node_key": "a", "action_type": "chain_transfer", "executor_key": "sim", "side_effect": true},
      {"node_key": "b", "action_type": "protocol_observe", "executor_key": "sim"}],
      "edges": [["a", "b"]]})");
    add_template(R"({"template_key": "v_fan", "version": 1, "nodes": [
      {"node_key": "r", "action_type": "chain_transfer", "executor_key": "sim", "side_effect": true},
      {"node_key": "x", "action_type": "protocol_observe", "executor_key": "sim"},
      {"node_key": "y", "action_type": "protocol_observe", "executor_key": "sim"},
      {"node_key": "z", "action_type": "protocol_observe", "executor_key": "sim"}],
      "edges": [["r", "x"], ["r", "y"], ["x", "z"], ["y", "z"]]})");
  }

  api::reply call(const std::string& pattern, std::vector<std::string> params = {},
                  std::multimap<std::string, std::string> query = {}) {
    for (auto& r : routes)
      if (r.pattern == pattern) {
        BOOST_TEST(r.needs_token);
        http::admin_request req;
        req.params = std::move(params);
        req.query = std::move(query);
        return r.handle(req);
      }
    BOOST_FAIL("no route " + pattern);
    return {};
  }

  json::document body(const api::reply& r) {
    auto doc = json::parse(r.body);
    BOOST_REQUIRE_MESSAGE(doc, r.body);
    return std::move(*doc);
  }

  /// Every id of the list, following next_cursor page by page.
  std::vector<std::string> walk(std::multimap<std::string, std::string> query, int& pages) {
    std::vector<std::string> ids;
    pages = 0;
    for (;;) {
      auto reply = call("/admin/movements", {}, query);
      BOOST_REQUIRE_MESSAGE(reply.status == 200, reply.body);
      auto doc = body(reply);
      ++pages;
      for (auto& item : doc["items"].GetArray())
        ids.push_back(item["id"].GetString());
      if (doc["next_cursor"].IsNull())
        return ids;
      query.erase("cursor");
      query.emplace("cursor", doc["next_cursor"].GetString());
    }
  }
};

std::string error_fields(const json::document& doc) {
  std::string out;
  for (auto& d : doc["error"]["details"].GetArray())
    out += std::string(d["field"].GetString()) + ";";
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(admin_views)

BOOST_FIXTURE_TEST_CASE(list_filters_by_state_and_template_and_pages_newest_first, views_fixture) {
  std::vector<std::string> chain{create("v_chain"), create("v_chain"), create("v_chain")};
  std::vector<std::string> fan{create("v_fan"), create("v_fan")};
  approve(chain[1]);

  int pages = 0;
  auto all = walk({{"limit", "2"}}, pages);
  BOOST_TEST(pages == 3);
  std::vector<std::string> newest_first{fan[1], fan[0], chain[2], chain[1], chain[0]};
  BOOST_TEST(all == newest_first, boost::test_tools::per_element());

  auto fans = walk({{"template_key", "v_fan"}, {"limit", "1"}}, pages);
  BOOST_TEST(fans == (std::vector<std::string>{fan[1], fan[0]}), boost::test_tools::per_element());
  BOOST_TEST(pages == 2);

  auto pending_chains = walk({{"template_key", "v_chain"}, {"state", "PENDING_APPROVAL"}}, pages);
  BOOST_TEST(pending_chains == (std::vector<std::string>{chain[2], chain[0]}),
             boost::test_tools::per_element());

  // An item carries the node count and the count per node state.
  auto doc = body(call("/admin/movements", {}, {{"template_key", "v_fan"}, {"limit", "1"}}));
  auto& item = doc["items"][0];
  BOOST_TEST(item["node_count"].GetInt() == 4);
  BOOST_TEST(item["node_states"]["BLOCKED"].GetInt() == 4);
  BOOST_TEST(std::string(item["intent"]["amount"].GetString()) == "10.5");
  auto reply = call("/admin/movements");
  BOOST_TEST(reply.status == 200);
  BOOST_TEST(reply.headers.size() == 1);
  BOOST_TEST(reply.headers[0].first == "Cache-Control");
}

BOOST_FIXTURE_TEST_CASE(list_filters_by_created_range_and_pages_within_it, views_fixture) {
  std::vector<std::string> ids{create("v_chain"), create("v_chain"), create("v_chain"),
                               create("v_chain")};
  // Spread the creation times an hour apart: ids[i] at 10:00 + i h.
  for (size_t i = 0; i < ids.size(); ++i)
    exec("UPDATE movement_requests SET created_at = timestamptz '2030-01-01T10:00:00Z' + " +
         std::to_string(i) + " * interval '1 hour' WHERE id = '" + ids[i] + "'");
  int pages = 0;
  // From inclusive, to exclusive, zones honoured.
  auto middle = walk({{"created_from", "2030-01-01T11:00:00Z"},
                      {"created_to", "2030-01-01T14:00:00+01:00"},
                      {"limit", "1"}},
                     pages);
  BOOST_TEST(middle == (std::vector<std::string>{ids[2], ids[1]}),
             boost::test_tools::per_element());
  BOOST_TEST(pages == 2);
  auto from_only = walk({{"created_from", "2030-01-01T12:00:00.000Z"}}, pages);
  BOOST_TEST(from_only == (std::vector<std::string>{ids[3], ids[2]}),
             boost::test_tools::per_element());

  auto bad = call("/admin/movements", {},
                  {{"created_from", "2030-01-01"}, {"created_to", "2030-01-01T10:00:00Z; DROP"}});
  BOOST_TEST(bad.status == 400);
  BOOST_TEST(error_fields(body(bad)) == "created_from;created_to;");
  // Well-formed but not a time: PostgreSQL refuses it, the answer is 400.
  BOOST_TEST(call("/admin/movements", {}, {{"created_to", "2030-13-45T10:00:00Z"}}).status == 400);
}

BOOST_FIXTURE_TEST_CASE(list_refuses_bad_parameters_listing_each, views_fixture) {
  auto r = call("/admin/movements", {},
                {{"state", "SLEEPING"}, {"limit", "0"}, {"cursor", "zz"}, {"sort", "asc"}});
  BOOST_TEST(r.status == 400);
  BOOST_TEST(error_fields(body(r)) == "cursor;sort;state;limit;");
  auto twice = call("/admin/movements", {}, {{"state", "COMPLETED"}, {"state", "FAILED"}});
  BOOST_TEST(twice.status == 400);
  BOOST_TEST(error_fields(body(twice)) == "state;");
}

BOOST_FIXTURE_TEST_CASE(detail_has_nodes_dag_artifacts_and_events, views_fixture) {
  auto id = create("v_fan");
  approve(id);
  exec("INSERT INTO node_artifacts (node_id, attempt_no, kind, payload)"
       " SELECT id, 1, 'submit_proof', '{\"tx_hash\": \"0xfeed\"}' FROM movement_request_nodes"
       " WHERE request_id = '" +
       id + "' AND node_key = 'r'");

  auto reply = call("/admin/movements/([^/]+)", {id});
  BOOST_REQUIRE_MESSAGE(reply.status == 200, reply.body);
  auto doc = body(reply);
  BOOST_TEST(std::string(doc["id"].GetString()) == id);
  BOOST_TEST(doc["nodes"].Size() == 4u);

  // The DAG: the plan's nodes in order with their live state, and its edges.
  auto& dag = doc["dag"];
  std::string nodes;
  for (auto& n : dag["nodes"].GetArray())
    nodes += std::string(n["node_key"].GetString()) + "=" + n["node_state"].GetString() + ";";
  BOOST_TEST(nodes == "r=READY;x=BLOCKED;y=BLOCKED;z=BLOCKED;");
  BOOST_TEST(json::dump(dag["edges"]) == R"([["r","x"],["r","y"],["x","z"],["y","z"]])");

  // Artifacts per node, with their payload.
  for (auto& n : doc["nodes"].GetArray()) {
    std::string key = n["node_key"].GetString();
    BOOST_TEST(n["artifacts"].Size() == (key == "r" ? 1u : 0u));
    if (key == "r") {
      BOOST_TEST(std::string(n["artifacts"][0]["kind"].GetString()) == "submit_proof");
      BOOST_TEST(std::string(n["artifacts"][0]["payload"]["tx_hash"].GetString()) == "0xfeed");
      BOOST_TEST(n["artifacts"][0]["attempt_no"].GetInt() == 1);
    }
  }

  // Events, oldest first.
  BOOST_REQUIRE(doc["events"].Size() >= 2u);
  BOOST_TEST(std::string(doc["events"][0]["event_type"].GetString()) == "request_created");
  BOOST_TEST(std::string(doc["events"][1]["event_type"].GetString()) == "request_approved");
  BOOST_TEST(doc["events_truncated"].GetBool() == false);
}

BOOST_FIXTURE_TEST_CASE(detail_of_unknown_or_malformed_id_is_404, views_fixture) {
  BOOST_TEST(call("/admin/movements/([^/]+)", {"00000000-0000-4000-8000-000000000000"}).status ==
             404);
  BOOST_TEST(call("/admin/movements/([^/]+)", {"not-a-uuid"}).status == 404);
}

BOOST_FIXTURE_TEST_CASE(cluster_lists_nodes_with_lease_age, views_fixture) {
  BOOST_TEST(call("/admin/cluster").body == "[]");
  exec("INSERT INTO cluster_nodes (runtime_node, host, cluster_port, last_seen_at)"
       " VALUES ('n2', '10.0.0.2', 4242, now() - interval '30 seconds'),"
       "        ('n1', '10.0.0.1', 4242, now())");
  auto doc = body(call("/admin/cluster"));
  BOOST_REQUIRE(doc.Size() == 2u);
  BOOST_TEST(std::string(doc[0]["runtime_node"].GetString()) == "n1");
  BOOST_TEST(doc[1]["last_seen_age_seconds"].GetDouble() >= 30.0);
  BOOST_TEST(doc[1]["cluster_port"].GetInt() == 4242);
}

BOOST_FIXTURE_TEST_CASE(lost_database_answers_503, views_fixture) {
  db::connection_pool nowhere{"postgresql://127.0.0.1:1/none?connect_timeout=1", 1};
  services::service_context lost{nowhere, settings, plans, nullptr, nullptr};
  auto lost_routes = http::admin_view_routes(lost);
  for (auto& r : lost_routes) {
    http::admin_request req;
    if (r.pattern.find('(') != std::string::npos)
      req.params = {"00000000-0000-4000-8000-000000000000"};
    BOOST_TEST(r.handle(req).status == 503, r.pattern);
  }
}

BOOST_AUTO_TEST_SUITE_END()
