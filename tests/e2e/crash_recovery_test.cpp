// A `movegate serve` process killed with SIGKILL between the SUBMITTING
// commit and the submit result: another process recovers the node with no
// second submit, and the sim ledger proves it.
#include <boost/test/unit_test.hpp>
#include <csignal>
#include <thread>

#include "build_paths.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/process.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

std::map<std::string, std::string> serve_env(const std::string& url, const std::string& node) {
  return {{"MG_DATABASE_URL", url},
          {"MG_RUNTIME_NODE", node},
          {"MG_NODE_SUBMITTING_GRACE_SECONDS", "4"},
          {"MG_EXECUTOR_TIMEOUT_SECONDS", "1"},
          {"MG_NODE_RECOVERY_INTERVAL_SECONDS", "1"},
          {"MG_LOG_LEVEL", "info"}};
}

std::string template_with(const std::string& sim) {
  return R"({"template_key": "crashy", "version": 1, "nodes": [
    {"node_key": "transfer", "action_type": "chain_transfer", "side_effect": true,
     "config": {"sim": )" +
         sim + R"(}},
    {"node_key": "confirm", "action_type": "step"}],
    "edges": [["transfer", "confirm"]]})";
}

struct crash_fixture : test::db_fixture {
  std::string log_path(const std::string& name) {
    return std::string(MG_BINARY_DIR) + "/e2e-" + name + ".log";
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(crash_recovery)

BOOST_FIXTURE_TEST_CASE(sigkill_before_the_provider_recorded_the_submit, crash_fixture) {
  add_template(template_with(R"({"submit_delay_ms": 2000})"));
  test::child a({"serve"}, serve_env(url, "proc-a"), log_path("kill-before-a"));
  std::this_thread::sleep_for(500ms);
  auto id = create_and_approve("crashy");
  BOOST_REQUIRE(wait_for("SELECT bool_or(node_state = 'SUBMITTING') FROM movement_request_nodes"
                         " WHERE node_key = 'transfer'",
                         15s));
  a.signal(SIGKILL);
  BOOST_TEST(a.wait(5s) == 128 + SIGKILL);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger") == 0); // killed before the provider wrote

  test::child b({"serve"}, serve_env(url, "proc-b"), log_path("kill-before-b"));
  BOOST_REQUIRE_MESSAGE(
      wait_for("SELECT request_state = 'COMPLETED' FROM movement_requests WHERE id = '" + id + "'",
               30s),
      b.log());
  // Attempt 1 was fenced by recovery, attempt 2 went through: one accepted
  // submit of the transfer in all.
  auto node = "(SELECT id FROM movement_request_nodes WHERE node_key = 'transfer')";
  BOOST_TEST(count(std::string("SELECT count(*) FROM sim_ledger WHERE NOT fenced AND node_id = ") +
                   node) == 1);
  BOOST_TEST(scalar(std::string("SELECT string_agg(attempt_no || ':' || fenced, ',' ORDER BY "
                                "attempt_no) FROM sim_ledger WHERE node_id = ") +
                    node) == "1:true,2:false");
  b.signal(SIGTERM);
  BOOST_TEST(b.wait(20s) == 0);
}

BOOST_FIXTURE_TEST_CASE(sigkill_after_the_provider_recorded_the_submit, crash_fixture) {
  add_template(template_with(R"({"submit_hold_ms": 2500})"));
  test::child a({"serve"}, serve_env(url, "proc-a"), log_path("kill-after-a"));
  std::this_thread::sleep_for(500ms);
  auto id = create_and_approve("crashy");
  BOOST_REQUIRE(wait_for("SELECT count(*) = 1 FROM sim_ledger", 15s));
  a.signal(SIGKILL);
  BOOST_TEST(a.wait(5s) == 128 + SIGKILL);
  BOOST_TEST(scalar("SELECT node_state FROM movement_request_nodes WHERE node_key = 'transfer'") ==
             "SUBMITTING");

  test::child b({"serve"}, serve_env(url, "proc-b"), log_path("kill-after-b"));
  BOOST_REQUIRE_MESSAGE(
      wait_for("SELECT request_state = 'COMPLETED' FROM movement_requests WHERE id = '" + id + "'",
               30s),
      b.log());
  // Recovery found the recorded attempt: no second submit.
  auto node = "(SELECT id FROM movement_request_nodes WHERE node_key = 'transfer')";
  BOOST_TEST(count(std::string("SELECT count(*) FROM sim_ledger WHERE node_id = ") + node) == 1);
  BOOST_TEST(scalar("SELECT attempt_no FROM movement_request_nodes WHERE node_key = 'transfer'") ==
             "1");
  b.signal(SIGTERM);
  BOOST_TEST(b.wait(20s) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
