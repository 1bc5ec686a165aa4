// The admin inspection page in a real browser: `movegate serve` with a
// slow fan-out/fan-in movement running and one dead-lettered callback, then
// tests/js/admin_page_browser.js drives Debian's headless Chromium through
// playwright-core (sign-in, the DAG turning COMPLETED, redeliver). Its
// screenshots land in <build>/artifacts/admin-page-*.png. The token must
// appear in no URL the page requested and nowhere in the serve log.
// tests/js/admin_actions_browser.js drives the page's signed actions (through
// the admin listener's /relay), the list's filters and keyset pages, the
// per-node timeline and the workers' charts (<build>/artifacts/admin-actions-*.png).
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>

#include "build_paths.hpp"
#include "domain/api_auth.hpp"
#include "tests/e2e/ops_serve_fixture.hpp"

using namespace mg;
using namespace mg::test::ops;

namespace {

// Every node needs four observations a second apart: the movement is still
// running when the browser opens it, and completes a few seconds later.
std::string slow_fan_template() {
  const char* slow = R"("sim": {"polls_until_done": 4, "retry_after_seconds": 1.0})";
  return std::string(R"({"template_key": "page_fan", "version": 1, "nodes": [
      {"node_key": "fund", "action_type": "chain_transfer", "executor_key": "sim",
       "side_effect": true, "config": {)") +
         slow + R"(}},
      {"node_key": "leg_a", "action_type": "destination_chain_finality_observe",
       "executor_key": "sim", "config": {)" +
         slow + R"(}},
      {"node_key": "leg_b", "action_type": "destination_chain_finality_observe",
       "executor_key": "sim", "config": {)" +
         slow + R"(}},
      {"node_key": "settle", "action_type": "protocol_observe", "executor_key": "sim",
       "config": {)" +
         slow + R"(}}],
    "edges": [["fund", "leg_a"], ["fund", "leg_b"], ["leg_a", "settle"], ["leg_b", "settle"]]})";
}

struct browser_fixture : ops_fixture {
  browser_fixture() { add_template(slow_fan_template()); }

  std::string create_and_approve_slow_fan() {
    auto created = client(creator).post("/v3/movements",
                                        R"({"template_key": "page_fan", "intent": {"asset": "USDC",
          "amount": "1250.75"}, "idempotency_key": "page-browser-1"})");
    BOOST_REQUIRE_MESSAGE(created.status == 201, created.body);
    auto id = field(created.body, "id");
    auto approved = client(approver).post("/v3/movements/" + id + "/approve", "{}");
    BOOST_REQUIRE_MESSAGE(approved.status == 200, approved.body);
    return id;
  }

  /// A callback row that used up its attempts, for the movement's
  /// request_created event (delivery target: a port nobody listens on).
  std::string dead_letter_callback(const std::string& request_id) {
    return scalar(
        "INSERT INTO movement_callback_outbox (event_id, request_id, event_type, payload,"
        " callback_url, status, attempts, max_attempts, callback_timestamp, callback_nonce,"
        " last_error)"
        " SELECT e.id, e.request_id, e.event_type, e.payload, 'http://127.0.0.1:" +
        std::to_string(test::free_port()) +
        "/hook', 'dlq', 5, 5, extract(epoch FROM now())::bigint, 'page-browser-nonce-0001',"
        " 'connection refused' FROM movement_events e"
        " WHERE e.request_id = '" +
        request_id + "' AND e.event_type = 'request_created' RETURNING id");
  }
};

/// Adds the key whose approval of its own movement four-eyes refuses.
struct actions_fixture : browser_fixture {
  actions_fixture() { keys.push_back(creator_approver); }
};

/// The JSON after "RESULT " in the script's output ("" when absent).
std::string result_line(const std::string& output) {
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("RESULT ", 0) == 0)
      return line.substr(7);
  return "";
}

} // namespace

BOOST_AUTO_TEST_SUITE(admin_page_browser)

BOOST_FIXTURE_TEST_CASE(browser_signs_in_watches_dag_complete_and_redelivers_dlq, browser_fixture) {
  // Debug logging, so every request the page makes is in the log the
  // token check below reads.
  start("e2e", {{"MG_LOG_LEVEL", "debug"}});
  auto id = create_and_approve_slow_fan();
  auto dlq_id = dead_letter_callback(id);
  BOOST_REQUIRE(!dlq_id.empty());
  auto event_before =
      scalar("SELECT event_id FROM movement_callback_outbox WHERE id = '" + dlq_id + "'");

  // The token goes to the script through its environment only.
  const std::string artifacts = std::string(MG_BINARY_DIR) + "/artifacts";
  ::setenv("MG_ADMIN_URL", ("http://127.0.0.1:" + std::to_string(admin_port)).c_str(), 1);
  ::setenv("MG_ADMIN_TOKEN", admin_token.c_str(), 1);
  ::setenv("MG_MOVEMENT_ID", id.c_str(), 1);
  ::setenv("MG_NODE_KEYS", "fund,leg_a,leg_b,settle", 1);
  ::setenv("MG_DLQ_CALLBACK_ID", dlq_id.c_str(), 1);
  ::setenv("MG_ARTIFACT_DIR", artifacts.c_str(), 1);
  auto run = run_shell("timeout 240 node " MG_SOURCE_DIR "/tests/js/admin_page_browser.js");
  ::unsetenv("MG_ADMIN_TOKEN");
  // Screenshot paths, for whoever reads the CTest output.
  std::cout << run.output << std::flush;
  BOOST_REQUIRE_MESSAGE(run.status == 0, run.output);
  BOOST_TEST(!result_line(run.output).empty());
  BOOST_TEST(run.output.find("\"running_when_opened\":true") != std::string::npos);

  // What the browser saw is what the database holds.
  BOOST_TEST(scalar("SELECT request_state FROM movement_requests WHERE id = '" + id + "'") ==
             "COMPLETED");
  BOOST_TEST(scalar("SELECT status || ':' || event_id FROM movement_callback_outbox WHERE id = '" +
                    dlq_id + "'") == "pending:" + event_before);

  // The token never reached the log, though every request was logged.
  auto log = server->log();
  BOOST_TEST(log.find("/admin/movements") != std::string::npos);
  BOOST_TEST(log.find(admin_token) == std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(page_loads_without_token_with_content_type_csp_and_no_store,
                        browser_fixture) {
  // Debug logging, so every request the page makes is in the log the
  // token check below reads.
  start("e2e", {{"MG_LOG_LEVEL", "debug"}});
  test::api_client admin(admin_port, "", "");
  test::request_options anonymous;
  anonymous.sign = false;
  auto page = admin.get("/", anonymous);
  BOOST_TEST(page.status == 200);
  BOOST_TEST(page.header("Content-Type") == "text/html; charset=utf-8");
  BOOST_TEST(page.header("Cache-Control") == "no-store");
  BOOST_TEST(page.header("Content-Security-Policy").find("default-src 'self'") == 0);
  BOOST_TEST(page.body.find("/assets/app.js") != std::string::npos);

  auto js = admin.get("/assets/app.js", anonymous);
  BOOST_TEST(js.status == 200);
  BOOST_TEST(js.header("Content-Type") == "text/javascript; charset=utf-8");
  BOOST_TEST(js.body.find("Authorization") != std::string::npos);
  auto css = admin.get("/assets/style.css", anonymous);
  BOOST_TEST(css.header("Content-Type") == "text/css; charset=utf-8");
  BOOST_TEST(admin.get("/assets/missing.js", anonymous).status == 404);

  // The page's data is not: no token → 401, the token → 200.
  BOOST_TEST(admin.get("/admin/movements", anonymous).status == 401);
  BOOST_TEST(admin.get("/admin/cluster", anonymous).status == 401);
  BOOST_TEST(admin_get("/admin/movements").status == 200);
}

BOOST_FIXTURE_TEST_CASE(browser_acts_signed_pages_the_list_and_shows_timeline_and_charts,
                        actions_fixture) {
  start("e2e", {{"MG_LOG_LEVEL", "debug"}});
  auto self_created = client(creator_approver)
                          .post("/v3/movements",
                                R"({"template_key": "ops_chain", "intent": {"asset": "USDC",
        "amount": "7"}, "idempotency_key": "page-actions-self"})");
  BOOST_REQUIRE_MESSAGE(self_created.status == 201, self_created.body);
  const std::string self_id = field(self_created.body, "id");
  const std::string cancel_id = create("page-actions-cancel");
  const int pending = 12; // two pages of 10
  for (int i = 2; i < pending; ++i)
    create("page-actions-" + std::to_string(i));

  const std::string artifacts = std::string(MG_BINARY_DIR) + "/artifacts";
  // The page's canonical query must be the server's, byte for byte: '+',
  // repeats, lower-case and malformed escapes, UTF-8, empty pieces.
  const std::string query_sample = "b=2&a=x+y&a=%7e%e2%82%ac&c&&d=%zz&a=%41=";
  const std::map<std::string, std::string> script_env{
      {"MG_ADMIN_URL", "http://127.0.0.1:" + std::to_string(admin_port)},
      {"MG_ADMIN_TOKEN", admin_token},
      {"MG_TEMPLATE_KEY", "ops_chain"},
      {"MG_PENDING_COUNT", std::to_string(pending)},
      {"MG_SELF_ID", self_id},
      {"MG_CANCEL_ID", cancel_id},
      {"MG_SELF_KEY", creator_approver.id},
      {"MG_SELF_SECRET", creator_approver.secret},
      {"MG_APPROVER_KEY", approver.id},
      {"MG_APPROVER_SECRET", approver.secret},
      {"MG_NODE_KEYS", "send,confirm"},
      {"MG_QUERY_SAMPLE", query_sample},
      {"MG_QUERY_CANONICAL", api::canonical_query(query_sample)},
      {"MG_ARTIFACT_DIR", artifacts}};
  for (const auto& [k, v] : script_env)
    ::setenv(k.c_str(), v.c_str(), 1);
  auto run = run_shell("timeout 120 node " MG_SOURCE_DIR "/tests/js/admin_actions_browser.js");
  for (const auto& [k, v] : script_env)
    ::unsetenv(k.c_str());
  std::cout << run.output << std::flush;
  BOOST_REQUIRE_MESSAGE(run.status == 0, run.output);
  BOOST_TEST(!result_line(run.output).empty());

  // What the page did is what the database holds, audited per key.
  auto state = [&](const std::string& id) {
    return scalar("SELECT request_state FROM movement_requests WHERE id = '" + id + "'");
  };
  BOOST_TEST(state(self_id) == "COMPLETED");
  BOOST_TEST(scalar("SELECT approved_by FROM movement_requests WHERE id = '" + self_id + "'") ==
             approver.id);
  BOOST_TEST(state(cancel_id) == "CANCELLED");
  BOOST_TEST(count("SELECT count(*) FROM audit_outbox WHERE action = 'approve' AND actor = '" +
                   creator_approver.id + "'") == 0);
  BOOST_TEST(count("SELECT count(*) FROM audit_outbox WHERE action = 'cancel' AND actor = '" +
                   approver.id + "'") == 1);

  // The page's calls went through the relay; no secret reached the log.
  auto log = server->log();
  BOOST_TEST(log.find("/relay/v3/movements/" + self_id + "/approve") != std::string::npos);
  for (const std::string& secret :
       std::vector<std::string>{creator_approver.secret, approver.secret, admin_token})
    BOOST_TEST(log.find(secret) == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
