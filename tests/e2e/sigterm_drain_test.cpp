// SIGTERM during a deploy strands nothing (SPEC §1): `movegate serve`
// awaits the submits its dispatchers have in flight and commits their
// results before it exits 0, claims nothing after the signal, and does not
// wait past the executor timeout (plus a margin) for a submit that never
// answers, and keeps its lease while it drains; the sim ledger proves that
// no submit went out twice.
#include <boost/test/unit_test.hpp>
#include <csignal>
#include <thread>

#include "build_paths.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/process.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

constexpr int movements = 6;

std::string log_path(const std::string& name) {
  return std::string(MG_BINARY_DIR) + "/e2e-" + name + ".log";
}

std::string template_with(const std::string& key, const std::string& sim) {
  return R"({"template_key": ")" + key + R"(", "version": 1, "nodes": [
    {"node_key": "send", "action_type": "chain_transfer", "side_effect": true,
     "config": {"sim": )" +
         sim + R"(}},
    {"node_key": "confirm", "action_type": "step"}],
    "edges": [["send", "confirm"]]})";
}

/// Every node some dispatcher claimed at least once, in id order.
const char* claimed_nodes =
    "SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM movement_request_nodes"
    " WHERE attempt_no > 0";

} // namespace

BOOST_AUTO_TEST_SUITE(sigterm_drain)

BOOST_FIXTURE_TEST_CASE(sigterm_awaits_in_flight_submits_and_claims_nothing_new, test::db_fixture) {
  // Two dispatchers, each inside a 4 s submit when the signal comes; the
  // other sends wait READY.
  add_template(template_with("slow_send", R"({"submit_delay_ms": 4000})"));
  const std::map<std::string, std::string> env{{"MG_DATABASE_URL", url},
                                               {"MG_RUNTIME_NODE", "drain-a"},
                                               {"MG_NODE_DISPATCHERS", "2"},
                                               {"MG_LOG_LEVEL", "info"}};
  test::child a({"serve"}, env, log_path("drain-a"));
  std::this_thread::sleep_for(500ms);
  std::vector<std::string> ids;
  for (int i = 0; i < movements; ++i)
    ids.push_back(create_and_approve("slow_send"));
  BOOST_REQUIRE_MESSAGE(wait_for("SELECT count(*) = 2 FROM movement_request_nodes"
                                 " WHERE node_state = 'SUBMITTING'",
                                 30s),
                        a.log());
  // Both submits are still in flight (no provider record yet), so neither
  // dispatcher may claim anything more before the signal.
  BOOST_REQUIRE(count("SELECT count(*) FROM sim_ledger") == 0);
  const auto claimed_before = scalar(claimed_nodes);
  a.signal(SIGTERM);
  BOOST_REQUIRE_MESSAGE(a.wait(60s) == 0, a.log());

  BOOST_TEST(count("SELECT count(*) FROM movement_request_nodes"
                   " WHERE node_state = 'SUBMITTING'") == 0);
  // The two submits were awaited: each answered and its result landed.
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE NOT fenced") == 2);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger l JOIN movement_request_nodes n"
                   " ON n.id = l.node_id WHERE NOT l.fenced AND (n.attempt_no <> l.attempt_no"
                   " OR n.node_state IN ('READY', 'SUBMITTING', 'UNKNOWN'))") == 0);
  BOOST_TEST(scalar(claimed_nodes) == claimed_before); // nothing claimed after the signal

  test::child b({"serve"}, env, log_path("drain-b"));
  BOOST_REQUIRE_MESSAGE(wait_for("SELECT count(*) = " + std::to_string(movements) +
                                     " FROM movement_requests WHERE request_state = 'COMPLETED'",
                                 120s),
                        b.log());
  // Each send went out exactly once, in its first attempt.
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger l JOIN movement_request_nodes n"
                   " ON n.id = l.node_id WHERE n.node_key = 'send'") == movements);
  BOOST_TEST(count("SELECT count(*) FROM movement_request_nodes n WHERE node_key = 'send'"
                   " AND n.attempt_no = 1 AND (SELECT count(*) FROM sim_ledger l"
                   " WHERE l.node_id = n.id AND l.attempt_no = 1 AND NOT l.fenced) = 1") ==
             movements);
  b.signal(SIGTERM);
  BOOST_TEST(b.wait(30s) == 0);
}

BOOST_FIXTURE_TEST_CASE(sigterm_does_not_wait_past_the_executor_timeout, test::db_fixture) {
  // The provider records the submit, then does not answer for far longer
  // than the executor timeout.
  add_template(template_with("stuck_send", R"({"submit_hold_ms": 60000})"));
  const std::map<std::string, std::string> env{{"MG_DATABASE_URL", url},
                                               {"MG_RUNTIME_NODE", "stuck-a"},
                                               {"MG_EXECUTOR_TIMEOUT_SECONDS", "2"},
                                               {"MG_NODE_SUBMITTING_GRACE_SECONDS", "4"},
                                               {"MG_NODE_RECOVERY_INTERVAL_SECONDS", "1"},
                                               {"MG_LOG_LEVEL", "info"}};
  test::child a({"serve"}, env, log_path("stuck-a"));
  std::this_thread::sleep_for(500ms);
  auto id = create_and_approve("stuck_send");
  BOOST_REQUIRE_MESSAGE(wait_for("SELECT count(*) = 1 FROM sim_ledger", 30s), a.log());
  a.signal(SIGTERM);
  // Executor timeout 2 s + the drain margin, well short of the 60 s hold.
  BOOST_REQUIRE_MESSAGE(a.wait(25s) == 0, a.log());
  BOOST_TEST(a.log().find("in-flight work did not finish") != std::string::npos);
  BOOST_TEST(scalar("SELECT node_state FROM movement_request_nodes WHERE node_key = 'send'") ==
             "SUBMITTING");

  // The next process under the name resolves the node through recovery,
  // which finds the recorded attempt: no second submit.
  test::child b({"serve"}, env, log_path("stuck-b"));
  BOOST_REQUIRE_MESSAGE(
      wait_for("SELECT request_state = 'COMPLETED' FROM movement_requests WHERE id = '" + id + "'",
               60s),
      b.log());
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger l JOIN movement_request_nodes n"
                   " ON n.id = l.node_id WHERE n.node_key = 'send'") == 1);
  BOOST_TEST(scalar("SELECT attempt_no FROM movement_request_nodes WHERE node_key = 'send'") ==
             "1");
  b.signal(SIGTERM);
  BOOST_TEST(b.wait(30s) == 0);
}

BOOST_FIXTURE_TEST_CASE(a_drain_longer_than_the_lease_keeps_the_lease, test::db_fixture) {
  // The submit answers 8 s after its claim, long after a 3 s lease would
  // have run out had the lease stopped renewing at the signal: the peer
  // would then take the node over and fence the attempt still in flight.
  add_template(template_with("slow_send", R"({"submit_delay_ms": 8000})"));
  auto env = [&](const std::string& node) {
    return std::map<std::string, std::string>{{"MG_DATABASE_URL", url},
                                              {"MG_RUNTIME_NODE", node},
                                              {"MG_CLUSTER_LEASE_SECONDS", "3"},
                                              {"MG_CLUSTER_LEASE_RENEW_SECONDS", "1"},
                                              {"MG_LOG_LEVEL", "info"}};
  };
  test::child a({"serve"}, env("drain-a"), log_path("lease-drain-a"));
  std::this_thread::sleep_for(500ms);
  auto id = create_and_approve("slow_send");
  BOOST_REQUIRE_MESSAGE(wait_for("SELECT node_state = 'SUBMITTING' AND claimed_by = 'drain-a'"
                                 " FROM movement_request_nodes WHERE node_key = 'send'",
                                 30s),
                        a.log());
  test::child peer({"serve"}, env("peer-b"), log_path("lease-peer-b"));
  BOOST_REQUIRE_MESSAGE(
      wait_for("SELECT count(*) = 1 FROM cluster_nodes WHERE runtime_node = 'peer-b'", 30s),
      peer.log());
  BOOST_REQUIRE(count("SELECT count(*) FROM sim_ledger") == 0); // still in flight
  a.signal(SIGTERM);
  BOOST_REQUIRE_MESSAGE(a.wait(60s) == 0, a.log());
  // drain-a's own attempt answered and landed; nobody fenced it.
  BOOST_TEST(scalar("SELECT attempt_no || ':' || (node_state NOT IN ('READY', 'SUBMITTING',"
                    " 'UNKNOWN')) FROM movement_request_nodes WHERE node_key = 'send'") ==
             "1:true");
  BOOST_TEST(scalar("SELECT string_agg(l.attempt_no || ':' || l.fenced, ',') FROM sim_ledger l"
                    " JOIN movement_request_nodes n ON n.id = l.node_id"
                    " WHERE n.node_key = 'send'") == "1:false");
  BOOST_TEST(peer.log().find("took over a dead runtime node") == std::string::npos);
  BOOST_REQUIRE_MESSAGE(
      wait_for("SELECT request_state = 'COMPLETED' FROM movement_requests WHERE id = '" + id + "'",
               60s),
      peer.log());
  peer.signal(SIGTERM);
  BOOST_TEST(peer.wait(30s) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
