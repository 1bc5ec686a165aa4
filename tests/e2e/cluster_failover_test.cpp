// Two `movegate serve` processes on one database (SPEC §8): SIGKILL of the
// one holding a node in SUBMITTING — the survivor's lease worker hands the
// node to recovery once the dead lease expires, long before the 60 s
// recovery interval or the 120 s SUBMITTING grace; one accepted submit in
// all. And a second process under a live process's name refuses to start.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include "build_paths.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/process.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

/// Recovery interval and SUBMITTING grace stay at their defaults (60 s,
/// 120 s): only the lease take-over can recover the node in time.
std::map<std::string, std::string> serve_env(const std::string& url, const std::string& node) {
  return {{"MG_DATABASE_URL", url}, {"MG_RUNTIME_NODE", node}, {"MG_LOG_LEVEL", "info"}};
}

const char* slow_submit_template = R"({"template_key": "slow", "version": 1, "nodes": [
    {"node_key": "transfer", "action_type": "chain_transfer", "side_effect": true,
     "config": {"sim": {"submit_delay_ms": 3000}}},
    {"node_key": "confirm", "action_type": "step"}],
    "edges": [["transfer", "confirm"]]})";

struct failover_fixture : test::db_fixture {
  std::string log_path(const std::string& name) {
    return std::string(MG_BINARY_DIR) + "/e2e-cluster-" + name + ".log";
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(cluster_failover)

BOOST_FIXTURE_TEST_CASE(sigkill_of_the_claiming_process_is_recovered_by_the_survivor,
                        failover_fixture) {
  add_template(slow_submit_template);
  std::map<std::string, std::unique_ptr<test::child>> procs;
  for (auto name : {"fo-a", "fo-b"})
    procs[name] =
        std::make_unique<test::child>(std::vector<std::string>{"serve"}, serve_env(url, name),
                                      log_path(std::string("kill-") + name));
  BOOST_REQUIRE(wait_for("SELECT count(*) = 2 FROM cluster_nodes", 15s));
  auto id = create_and_approve("slow");
  const std::string transfer =
      "(SELECT id FROM movement_request_nodes WHERE node_key = 'transfer')";
  BOOST_REQUIRE(wait_for("SELECT bool_or(node_state = 'SUBMITTING') FROM movement_request_nodes"
                         " WHERE node_key = 'transfer'",
                         15s));
  auto claimer = scalar("SELECT claimed_by FROM movement_request_nodes WHERE id = " + transfer);
  BOOST_REQUIRE(procs.count(claimer) == 1);
  auto survivor = claimer == "fo-a" ? "fo-b" : "fo-a";

  procs[claimer]->signal(SIGKILL);
  auto killed_at = std::chrono::steady_clock::now();
  BOOST_TEST(procs[claimer]->wait(5s) == 128 + SIGKILL);
  BOOST_REQUIRE_MESSAGE(
      wait_for("SELECT node_state <> 'SUBMITTING' FROM movement_request_nodes WHERE id = " +
                   transfer,
               30s),
      procs[survivor]->log());
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  std::cout << "cluster_failover: kill -> node left SUBMITTING in " << seconds << " s" << std::endl;
  BOOST_TEST_MESSAGE("kill -> recovery " << seconds << " s");
  BOOST_TEST(seconds < 15.0);
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE request_id = '" + id +
                   "' AND payload->'data'->>'error_code' = 'RUNTIME_NODE_LOST'") == 1);
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes WHERE runtime_node = '" + claimer + "'") ==
             0);

  // node_recovery acts at once (woken by the take-over): it fences attempt 1.
  BOOST_REQUIRE(
      wait_for("SELECT count(*) = 1 FROM sim_ledger WHERE fenced AND node_id = " + transfer, 15s));
  double fenced_after =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  std::cout << "cluster_failover: kill -> recovery fenced attempt 1 in " << fenced_after << " s"
            << std::endl;
  BOOST_TEST(fenced_after < 15.0);
  BOOST_REQUIRE_MESSAGE(
      wait_for("SELECT request_state = 'COMPLETED' FROM movement_requests WHERE id = '" + id + "'",
               30s),
      procs[survivor]->log());
  // Attempt 1 never reached the provider (killed during its submit delay)
  // and was fenced by recovery; attempt 2 went through: one accepted submit.
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE NOT fenced AND node_id = " + transfer) ==
             1);
  procs[survivor]->signal(SIGTERM);
  BOOST_TEST(procs[survivor]->wait(20s) == 0);
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes") == 0); // a clean stop leaves
}

BOOST_FIXTURE_TEST_CASE(a_second_process_under_a_live_name_refuses_to_start, failover_fixture) {
  test::child first({"serve"}, serve_env(url, "twin"), log_path("twin-1"));
  BOOST_REQUIRE(
      wait_for("SELECT count(*) = 1 FROM cluster_nodes WHERE runtime_node = 'twin'", 15s));
  test::child second({"serve"}, serve_env(url, "twin"), log_path("twin-2"));
  int code = second.wait(20s);
  BOOST_TEST(code != 0);
  BOOST_TEST(code != -1); // it exited, and did not hang
  BOOST_TEST_MESSAGE(second.log());
  BOOST_TEST(second.log().find("'twin'") != std::string::npos);
  BOOST_TEST(first.running()); // the live process is not disturbed
  first.signal(SIGTERM);
  BOOST_TEST(first.wait(20s) == 0);
}

BOOST_FIXTURE_TEST_CASE(a_dropped_connection_makes_the_survivor_look_as_the_lease_expires,
                        failover_fixture) {
  // Leases renewed every 5 s and dead after 6 s: the survivor's own pass
  // interval alone would take a dead peer over anywhere within 5 s of its
  // lease expiring. The dropped middleman connection must make it look at
  // the moment of expiry instead (and not before: the lease decides).
  auto env_of = [&](const std::string& node) {
    auto e = serve_env(url, node);
    e["MG_CLUSTER_LEASE_RENEW_SECONDS"] = "5";
    e["MG_CLUSTER_LEASE_SECONDS"] = "6";
    return e;
  };
  std::vector<std::string> victims{"dl-v1", "dl-v2"};
  std::map<std::string, std::unique_ptr<test::child>> procs;
  for (auto& v : victims)
    procs[v] = std::make_unique<test::child>(std::vector<std::string>{"serve"}, env_of(v),
                                             log_path("drop-" + v));
  BOOST_REQUIRE(wait_for("SELECT count(*) = 2 FROM cluster_nodes WHERE cluster_port > 0", 15s));
  test::child survivor({"serve"}, env_of("dl-s"), log_path("drop-dl-s"));
  auto watching = [&](const std::string& peer) {
    return survivor.log().find(R"("msg":"watching cluster peer","peer":")" + peer + "\"") !=
           std::string::npos;
  };
  for (int i = 0; i < 150 && !(watching(victims[0]) && watching(victims[1])); ++i)
    std::this_thread::sleep_for(100ms);
  BOOST_REQUIRE_MESSAGE(watching(victims[0]) && watching(victims[1]), survivor.log());

  for (auto& v : victims)
    procs[v]->signal(SIGKILL);
  for (auto& v : victims)
    BOOST_TEST(procs[v]->wait(5s) == 128 + SIGKILL);
  // When each lease expires, on the database's clock.
  std::map<std::string, double> expires_at;
  for (auto& v : victims)
    expires_at[v] = std::stod(
        scalar("SELECT EXTRACT(EPOCH FROM last_seen_at + interval '6 s') FROM cluster_nodes WHERE "
               "runtime_node = '" +
               v + "'"));
  std::map<std::string, double> taken_at;
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (taken_at.size() < victims.size() && std::chrono::steady_clock::now() < deadline) {
    double now = std::stod(scalar("SELECT EXTRACT(EPOCH FROM clock_timestamp())"));
    for (auto& v : victims)
      if (!taken_at.count(v) &&
          count("SELECT count(*) FROM cluster_nodes WHERE runtime_node = '" + v + "'") == 0)
        taken_at[v] = now;
    std::this_thread::sleep_for(10ms);
  }
  BOOST_REQUIRE_MESSAGE(taken_at.size() == victims.size(), survivor.log());
  for (auto& v : victims) {
    double late = taken_at[v] - expires_at[v];
    std::cout << "cluster_failover: " << v << " taken over " << late << " s after its lease expired"
              << std::endl;
    BOOST_TEST(late >= -0.05, v << " taken over before its lease expired: " << late);
    BOOST_TEST(late < 0.5, v << " taken over " << late << " s after its lease expired");
    BOOST_TEST(survivor.log().find(
                   R"("msg":"cluster peer connection lost; looking at its lease now","peer":")" +
                   v + "\"") != std::string::npos);
  }
  survivor.signal(SIGTERM);
  BOOST_TEST(survivor.wait(20s) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
