// GET /metrics on a live `movegate serve` after a movement ran through:
// `promtool check metrics` accepts the exposition, the key series are there
// with sane values, every metric the alert rules and the dashboard in
// deploy/ use is exported, and the route needs the admin token. Also the OpenAPI
// description served unsigned at /openapi.json passes a real validator
// (@apidevtools/swagger-parser from tests/js).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "build_paths.hpp"
#include "http/openapi.hpp"
#include "tests/e2e/ops_serve_fixture.hpp"

using namespace mg;
using namespace mg::test::ops;

namespace {

/// The value of the sample line that starts with `series` + " ", or -1.
double sample(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(series + " ", 0) == 0)
      return std::stod(line.substr(series.size() + 1));
  return -1;
}

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(MG_SOURCE_DIR) + "/" + relative);
  BOOST_REQUIRE_MESSAGE(in, "cannot read " << relative);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Every movegate_* name in `text` (histogram names keep their suffix).
std::set<std::string> metric_names(const std::string& text) {
  static const std::regex name(R"(\bmovegate_[a-z0-9_]+)");
  std::set<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), name), end; it != end; ++it)
    out.insert(it->str());
  return out;
}

/// Whether the exposition has a sample line of `name`.
bool exported(const std::string& exposition, const std::string& name) {
  return exposition.find("\n" + name + "{") != std::string::npos ||
         exposition.find("\n" + name + " ") != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_SUITE(metrics_e2e)

BOOST_FIXTURE_TEST_CASE(live_metrics_pass_promtool_and_show_the_work, ops_fixture) {
  start();
  auto id = create("metrics-1");
  auto approved = client(approver).post("/v3/movements/" + id + "/approve");
  BOOST_REQUIRE_MESSAGE(approved.status == 200, approved.body);
  BOOST_REQUIRE(wait_state(id, "COMPLETED"));
  BOOST_REQUIRE(
      wait_for("SELECT count(*) > 0 FROM worker_heartbeats WHERE runtime_node = 'e2e'", 10s));

  auto scraped = admin_get("/metrics");
  BOOST_REQUIRE_MESSAGE(scraped.status == 200, scraped.body);
  BOOST_TEST(scraped.header("Content-Type").rfind("text/plain; version=0.0.4", 0) == 0,
             scraped.header("Content-Type"));
  const std::string& text = scraped.body;
  const std::string path = prefix + "-metrics.txt";
  write_file(path, text);
  auto promtool = run_shell("promtool check metrics < " + path);
  BOOST_TEST(promtool.status == 0, "promtool check metrics: " << promtool.output);

  BOOST_TEST(sample(text, "movegate_worker_iterations_total{worker=\"node_dispatcher\"}") > 0);
  // Whichever of the dispatchers took the node counted it.
  double dispatched = 0;
  for (std::string worker :
       {"node_dispatcher", "node_dispatcher_2", "node_dispatcher_3", "node_dispatcher_4"})
    dispatched +=
        std::max(0.0, sample(text, "movegate_worker_items_total{worker=\"" + worker + "\"}"));
  BOOST_TEST(dispatched >= 1);
  BOOST_TEST(sample(text, "movegate_worker_errors_total{worker=\"node_dispatcher\"}") == 0);
  BOOST_TEST(sample(text, "movegate_worker_pass_duration_seconds_count{worker=\"node_observer\"}") >
             0);
  BOOST_TEST(sample(text, "movegate_requests{state=\"COMPLETED\"}") == 1);
  BOOST_TEST(sample(text, "movegate_requests{state=\"PENDING_APPROVAL\"}") == 0);
  BOOST_TEST(sample(text, "movegate_nodes{state=\"COMPLETED\"}") == 2);
  BOOST_TEST(sample(text, "movegate_database_up") == 1);
  BOOST_TEST(sample(text, "movegate_dispatch_latency_samples") == 1);
  BOOST_TEST(sample(text, "movegate_dispatch_latency_seconds{percentile=\"50\"}") >= 0);
  BOOST_TEST(sample(text, "movegate_audit_outbox_pending") >= 0);
  BOOST_TEST(sample(text, "movegate_db_pool_connections{state=\"in_use\"}") == 0);
  BOOST_TEST(sample(text, "movegate_db_pool_connections{state=\"idle\"}") >= 1);
  // Labelled with the route pattern, never the raw path (the id is not in it).
  BOOST_TEST(sample(text, "movegate_http_requests_total{listener=\"api\",method=\"POST\","
                          "route=\"/v3/movements/{id}/approve\",status=\"200\"}") == 1);
  BOOST_TEST(text.find(id) == std::string::npos);
  BOOST_TEST(text.find("movegate_worker_heartbeat_age_seconds{worker=\"node_dispatcher\","
                       "runtime_node=\"e2e\",group=\"core\"}") != std::string::npos);
  // send → confirm: confirm's accepted submit is one hop.
  BOOST_TEST(sample(text, "movegate_hop_latency_seconds_count") >= 1);
  BOOST_TEST(sample(text, "movegate_http_responses_total{listener=\"api\",class=\"2xx\"}") >= 2);
  BOOST_TEST(sample(text, "movegate_http_responses_total{listener=\"api\",class=\"5xx\"}") == 0);
  BOOST_TEST(sample(text, "movegate_cluster_members{state=\"live\"}") == 1);
  BOOST_TEST(sample(text, "movegate_oldest_ready_node_age_seconds") == 0);

  // What the alert rules and the dashboard query is really there.
  std::set<std::string> used;
  for (const char* file :
       {"deploy/prometheus/movegate-rules.yml", "deploy/grafana/movegate-dashboard.json"}) {
    auto names = metric_names(read_source(file));
    BOOST_TEST(names.size() >= 8u, file);
    used.insert(names.begin(), names.end());
  }
  for (auto& name : used)
    BOOST_TEST(exported(text, name), name << " is used in deploy/ but not exported");
}

BOOST_FIXTURE_TEST_CASE(metrics_need_the_admin_token, ops_fixture) {
  start();
  test::api_client admin(admin_port, "", "");
  test::request_options o;
  o.sign = false;
  BOOST_TEST(admin.get("/metrics", o).status == 401);
  o.headers = {{"Authorization", "Bearer wrong-token"}};
  BOOST_TEST(admin.get("/metrics", o).status == 401);
}

BOOST_FIXTURE_TEST_CASE(openapi_is_served_unsigned_and_validates, ops_fixture) {
  start();
  test::api_client anon(api_port, "", "");
  test::request_options o;
  o.sign = false;
  auto doc = anon.get("/openapi.json", o);
  BOOST_REQUIRE_EQUAL(doc.status, 200);
  BOOST_TEST(doc.header("Content-Type").rfind("application/json", 0) == 0);
  BOOST_TEST(doc.body == http::openapi_document());
  // /v3 stays signed.
  BOOST_TEST(anon.get("/v3/movements", o).status == 401);

  const std::string js = std::string(MG_SOURCE_DIR) + "/tests/js";
  BOOST_REQUIRE_MESSAGE(
      std::ifstream(js + "/node_modules/@apidevtools/swagger-parser/package.json"),
      "run `npm ci --prefix tests/js` first (scripts/test.sh does)");
  const std::string path = prefix + "-openapi.json";
  write_file(path, doc.body);
  auto validated = run_shell("node " + js + "/validate_openapi.js " + path);
  BOOST_TEST(validated.status == 0, validated.output);
}

BOOST_AUTO_TEST_SUITE_END()
