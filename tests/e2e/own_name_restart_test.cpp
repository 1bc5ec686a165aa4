// Restart under its own name (SPEC §8), with real `movegate serve`
// processes: a SIGKILLed process restarted under the same MG_RUNTIME_NODE
// within its lease serves at once and sends the victim's SUBMITTING work
// to recovery at once; a second live process under the name refuses to
// start; a holder it cannot see (another boot) is waited out — admin
// listener up, /readyz 503, a log line every few seconds — until its lease
// expires.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include "actors/proc_identity.hpp"
#include "build_paths.hpp"
#include "tests/support/api_client.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/process.hpp"
#include "tests/support/serve_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

const std::string wait_line = "waiting for the lease of this runtime node to expire";

const char* slow_submit_template = R"({"template_key": "slow", "version": 1, "nodes": [
    {"node_key": "transfer", "action_type": "chain_transfer", "side_effect": true,
     "config": {"sim": {"submit_delay_ms": 2000}}},
    {"node_key": "confirm", "action_type": "step"}],
    "edges": [["transfer", "confirm"]]})";

const std::string transfer = "(SELECT id FROM movement_request_nodes WHERE node_key = 'transfer')";

struct own_name_fixture : test::db_fixture {
  int admin_port = 0;

  /// Recovery interval and SUBMITTING grace stay at their defaults (60 s,
  /// 120 s): only the take-over at start can recover the victim's work soon.
  std::map<std::string, std::string> env(const std::string& node, const std::string& lease) {
    admin_port = test::free_port();
    return {{"MG_DATABASE_URL", url},
            {"MG_RUNTIME_NODE", node},
            {"MG_ADMIN_ADDR", "127.0.0.1:" + std::to_string(admin_port)},
            {"MG_CLUSTER_LEASE_SECONDS", lease},
            {"MG_LOG_LEVEL", "info"}};
  }

  std::string log_path(const std::string& name) {
    return std::string(MG_BINARY_DIR) + "/e2e-own-name-" + name + ".log";
  }

  /// GET /readyz on the last env()'s admin port; -1 while nothing listens.
  int readyz() const {
    test::request_options unsigned_call;
    unsigned_call.sign = false;
    try {
      return test::api_client(admin_port, "", "").get("/readyz", unsigned_call).status;
    } catch (const std::runtime_error&) {
      return -1;
    }
  }

  /// Polls /readyz until it answers 200 (60 s at most, the process running).
  bool wait_ready(test::child& p) {
    auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline && p.running()) {
      if (readyz() == 200)
        return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  /// Polls `p`'s output until it holds `what` (60 s at most).
  bool wait_for_log(test::child& p, const std::string& what) {
    auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline && p.running()) {
      if (p.log().find(what) != std::string::npos)
        return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  /// The pid cluster_nodes records for `node` ("" for none).
  std::string holder_pid(const std::string& node) {
    return scalar("SELECT holder_pid FROM cluster_nodes WHERE runtime_node = '" + node + "'");
  }

  double db_now() { return std::stod(scalar("SELECT EXTRACT(EPOCH FROM clock_timestamp())")); }
};

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

} // namespace

BOOST_AUTO_TEST_SUITE(own_name_restart)

BOOST_FIXTURE_TEST_CASE(sigkill_then_restart_under_the_same_name_serves_and_recovers_at_once,
                        own_name_fixture) {
  // A long lease, so "before it expires" leaves a loaded machine plenty
  // of room, and both SIGKILLed and restarted process use it.
  const std::string lease = "20";
  add_template(slow_submit_template);
  auto victim = std::make_unique<test::child>(std::vector<std::string>{"serve"},
                                              env("own-a", lease), log_path("victim"));
  BOOST_REQUIRE_MESSAGE(wait_ready(*victim), victim->log());
  auto id = create_and_approve("slow");
  BOOST_REQUIRE(wait_for("SELECT node_state = 'SUBMITTING' AND claimed_by = 'own-a'"
                         " FROM movement_request_nodes WHERE id = " +
                             transfer,
                         30s));
  victim->signal(SIGKILL);
  BOOST_TEST(victim->wait(10s) == 128 + SIGKILL);
  // The victim's lease, on the database's clock.
  double lease_expires = std::stod(
      scalar("SELECT EXTRACT(EPOCH FROM last_seen_at + interval '20 s') FROM cluster_nodes"
             " WHERE runtime_node = 'own-a'"));
  std::this_thread::sleep_for(500ms);

  auto started = std::chrono::steady_clock::now();
  test::child restarted({"serve"}, env("own-a", lease), log_path("restarted"));
  BOOST_REQUIRE_MESSAGE(wait_ready(restarted), restarted.log());
  double ready_after =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "own_name_restart: restart -> /readyz 200 in " << ready_after << " s" << std::endl;
  BOOST_TEST(db_now() < lease_expires); // it did not wait for the lease
  BOOST_TEST(restarted.log().find("took this runtime node over from its previous holder") !=
             std::string::npos);

  // Recovery at once (its first pass; its interval is 60 s): attempt 1 is
  // fenced while the victim's lease would still be live.
  BOOST_REQUIRE_MESSAGE(
      wait_for("SELECT count(*) = 1 FROM sim_ledger WHERE fenced AND node_id = " + transfer, 30s),
      restarted.log());
  double fenced_after =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "own_name_restart: restart -> attempt 1 fenced in " << fenced_after << " s"
            << std::endl;
  BOOST_TEST(db_now() < lease_expires);
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE request_id = '" + id +
                   "' AND payload->'data'->>'error_code' = 'RUNTIME_NODE_LOST'") == 1);
  BOOST_REQUIRE_MESSAGE(
      wait_for("SELECT request_state = 'COMPLETED' FROM movement_requests WHERE id = '" + id + "'",
               30s),
      restarted.log());
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE NOT fenced AND node_id = " + transfer) ==
             1);
  BOOST_TEST(holder_pid("own-a") == std::to_string(restarted.pid()));
  restarted.signal(SIGTERM);
  BOOST_TEST(restarted.wait(20s) == 0);
}

BOOST_FIXTURE_TEST_CASE(a_second_live_process_under_the_name_exits_naming_mg_runtime_node,
                        own_name_fixture) {
  test::child first({"serve"}, env("own-b", "8"), log_path("twin-1"));
  BOOST_REQUIRE_MESSAGE(wait_ready(first), first.log());
  test::child second({"serve"}, env("own-b", "8"), log_path("twin-2"));
  int code = second.wait(30s);
  BOOST_TEST(code != 0);
  BOOST_TEST(code != -1); // it exited, and did not wait
  BOOST_TEST_MESSAGE(second.log());
  BOOST_TEST(second.log().find("MG_RUNTIME_NODE") != std::string::npos);
  BOOST_TEST(second.log().find("pid " + std::to_string(first.pid()) + " is running") !=
             std::string::npos);
  BOOST_TEST(first.running()); // the live process is not disturbed
  BOOST_TEST(holder_pid("own-b") == std::to_string(first.pid()));
  first.signal(SIGTERM);
  BOOST_TEST(first.wait(20s) == 0);
}

BOOST_FIXTURE_TEST_CASE(a_holder_under_another_boot_id_is_waited_out_until_its_lease_expires,
                        own_name_fixture) {
  // The holder looks like this host's machine in another boot (or a clone
  // of its image): nothing here proves it dead. The test keeps its lease
  // alive until the waiting process has shown how it waits.
  auto here = actors::this_process_identity();
  exec("INSERT INTO cluster_nodes (runtime_node, host, last_seen_at, holder_machine_id,"
       " holder_boot_id, holder_pid_namespace, holder_pid, holder_start_time)"
       " VALUES ('own-c', '127.0.0.1', clock_timestamp(), '" +
       here.machine_id + "', '00000000-0000-0000-0000-000000000000', " +
       std::to_string(here.pid_namespace) + ", 1, 1)");
  const std::string renew = "UPDATE cluster_nodes SET last_seen_at = clock_timestamp()"
                            " WHERE runtime_node = 'own-c'";
  test::child waiting({"serve"}, env("own-c", "3"), log_path("waiting"));
  bool saw_503 = false;
  auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline && waiting.running() &&
         !(saw_503 && occurrences(waiting.log(), wait_line) >= 2)) {
    exec(renew);
    int status = readyz();
    BOOST_REQUIRE(status != 200);
    saw_503 |= status == 503;
    std::this_thread::sleep_for(200ms);
  }
  BOOST_REQUIRE_MESSAGE(saw_503, waiting.log());
  BOOST_REQUIRE_MESSAGE(occurrences(waiting.log(), wait_line) >= 2, waiting.log());
  BOOST_TEST(waiting.log().find("another boot id") != std::string::npos);
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes WHERE holder_pid = 1") == 1);
  exec(renew);
  double expires =
      std::stod(scalar("SELECT EXTRACT(EPOCH FROM last_seen_at + interval '3 s') FROM cluster_nodes"
                       " WHERE runtime_node = 'own-c'"));
  BOOST_REQUIRE_MESSAGE(wait_ready(waiting), waiting.log());
  double started_at = std::stod(scalar("SELECT EXTRACT(EPOCH FROM started_at) FROM cluster_nodes"
                                       " WHERE runtime_node = 'own-c'"));
  BOOST_TEST(started_at >= expires);
  std::cout << "own_name_restart: started " << started_at - expires
            << " s after the unprovable holder's lease expired" << std::endl;
  BOOST_TEST(holder_pid("own-c") == std::to_string(waiting.pid()));
  waiting.signal(SIGTERM);
  BOOST_TEST(waiting.wait(20s) == 0);
}

BOOST_FIXTURE_TEST_CASE(a_stop_signal_ends_the_wait_cleanly, own_name_fixture) {
  exec("INSERT INTO cluster_nodes (runtime_node, host, last_seen_at)"
       " VALUES ('own-d', '127.0.0.1', clock_timestamp())"); // a row without an identity
  test::child waiting({"serve"}, env("own-d", "60"), log_path("stopped"));
  BOOST_REQUIRE_MESSAGE(wait_for_log(waiting, wait_line), waiting.log());
  waiting.signal(SIGTERM);
  BOOST_TEST(waiting.wait(20s) == 0);
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes WHERE runtime_node = 'own-d'"
                   " AND holder_pid IS NULL") == 1); // the holder's row is untouched
}

BOOST_AUTO_TEST_SUITE_END()
