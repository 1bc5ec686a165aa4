// Supervision: a core worker failing outside its loop (a fatal pass outcome,
// or anything the loop runner does not count as a pass error) stops the
// runtime with exit code 1; a crashing sidecar is logged and restarted,
// nothing else is touched; errors inside a pass are counted and the worker
// goes on. The supervisor itself never waits on the database.
#include <boost/test/unit_test.hpp>

#include <mutex>

#include "tests/support/db_helpers.hpp"
#include "tests/support/hooked_sim.hpp"
#include "tests/support/runtime_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

/// A worker whose pass escapes the loop runner's error handling (a non-std
/// exception stands for any failure the loop does not catch) on pass `n`.
actors::worker_spec crasher(const std::string& name, actors::worker_group group,
                            std::shared_ptr<std::atomic<int>> passes, int fail_on) {
  return {name, group, domain::loop_policy{0.05, 0, false},
          [passes, fail_on](db::connection_slot&) {
            if (++*passes % fail_on == 0)
              throw 42;
            return workers::pass_result{};
          }};
}

/// A worker whose pass reports a fatal outcome (as a value) on pass `n`.
actors::worker_spec fatal_on(const std::string& name, actors::worker_group group,
                             std::shared_ptr<std::atomic<int>> passes, int n) {
  return {name, group, domain::loop_policy{0.05, 0, false}, [passes, n](db::connection_slot&) {
            workers::pass_result r;
            if (++*passes % n == 0)
              r.fatal = "test: this worker must stop";
            return r;
          }};
}

std::string supervisor_status(test::runtime_fixture& f, std::chrono::seconds timeout = 5s) {
  std::string out;
  (*f.self)
      ->request(f.rt->supervisor(), timeout, actors::status_atom::value)
      .receive([&](const std::string& s) { out = s; }, [&](caf::error&) { out = "error"; });
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(supervision)

BOOST_FIXTURE_TEST_CASE(core_worker_failure_stops_runtime_with_exit_code_1, test::runtime_fixture) {
  auto passes = std::make_shared<std::atomic<int>>(0);
  start({crasher("test_core_crasher", actors::worker_group::core, passes, 3)});
  int code = wait_exit(15s);
  BOOST_TEST(code == 1);
  BOOST_TEST(passes->load() == 3); // it was not restarted
  // Every other worker stopped cleanly before the verdict was reported.
  BOOST_TEST(count("SELECT count(*) FROM worker_heartbeats WHERE runtime_node = 'test-node'") >= 5);
}

BOOST_FIXTURE_TEST_CASE(sidecar_crash_is_restarted_and_runtime_goes_on, test::runtime_fixture) {
  auto passes = std::make_shared<std::atomic<int>>(0);
  // Fails on every second pass: each incarnation runs one good pass, then crashes.
  start({crasher("test_sidecar_crasher", actors::worker_group::sidecar, passes, 2)});
  // First restart after 1 s, second after 2 s more.
  BOOST_TEST(eventually([&] { return passes->load() >= 4; }, 6s));
  auto status = supervisor_status(*this);
  BOOST_TEST(status.find("\"name\":\"test_sidecar_crasher\",\"group\":\"sidecar\"") !=
             std::string::npos);
  BOOST_TEST(status.find("\"crashes\":0") != std::string::npos); // core workers untouched
  // The core keeps working while the sidecar crashes.
  add_template(R"({"template_key": "one", "version": 1,
    "nodes": [{"node_key": "a", "action_type": "step"}], "edges": []})");
  auto id = approve_and_notify("one");
  BOOST_TEST(eventually(
      [&] { return snapshot(id).request_state == domain::request_state::completed; }, 10s));
  BOOST_TEST_MESSAGE("state " << snapshot(id).request_state << " node " << node_state(id, "a"));
  BOOST_TEST(stop() == 0);
}

BOOST_FIXTURE_TEST_CASE(a_fatal_pass_outcome_stops_the_runtime_with_exit_code_1,
                        test::runtime_fixture) {
  auto passes = std::make_shared<std::atomic<int>>(0);
  start({fatal_on("test_core_fatal", actors::worker_group::core, passes, 2)});
  BOOST_TEST(wait_exit(15s) == 1);
  BOOST_TEST(passes->load() == 2); // no pass after the fatal one, no restart
  // The reason travels with the value: in the page and the heartbeat.
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox WHERE kind = 'core_group_failure'"
                   " AND subject = 'test_core_fatal'"
                   " AND payload->>'reason' LIKE '%this worker must stop%'") == 1);
  BOOST_TEST(count("SELECT count(*) FROM worker_heartbeats WHERE worker_name = 'test_core_fatal'"
                   " AND last_error LIKE '%this worker must stop%'") == 1);
}

BOOST_FIXTURE_TEST_CASE(a_fatal_sidecar_outcome_restarts_the_sidecar_only, test::runtime_fixture) {
  auto passes = std::make_shared<std::atomic<int>>(0);
  // Every second pass is fatal: each incarnation runs one good pass, then stops.
  start({fatal_on("test_sidecar_fatal", actors::worker_group::sidecar, passes, 2)});
  BOOST_TEST(eventually([&] { return passes->load() >= 4; }, 6s));
  auto status = supervisor_status(*this);
  BOOST_TEST(status.find("\"name\":\"test_sidecar_fatal\",\"group\":\"sidecar\"") !=
             std::string::npos);
  BOOST_TEST(stop() == 0);
}

BOOST_FIXTURE_TEST_CASE(the_supervisor_answers_while_the_failure_page_is_blocked,
                        test::runtime_fixture) {
  auto armed = std::make_shared<std::atomic<bool>>(false);
  start({{"test_core_armed", actors::worker_group::core, domain::loop_policy{0.05, 0, false},
          [armed](db::connection_slot&) {
            workers::pass_result r;
            if (armed->load())
              r.fatal = "test: armed";
            return r;
          }}});
  // Hold the table the page goes to: its insert waits for this lock.
  auto blocking_conn = db::connect(url);
  auto blocker = std::make_unique<pqxx::work>(*blocking_conn);
  blocker->exec("LOCK TABLE notification_outbox IN ACCESS EXCLUSIVE MODE");
  armed->store(true);
  BOOST_TEST(wait_for("SELECT EXISTS (SELECT 1 FROM pg_stat_activity"
                      " WHERE application_name = 'movegate:core_failure'"
                      " AND wait_event_type = 'Lock')",
                      15s));
  // The page's write is stuck; the supervisor (on CAF's shared threads)
  // still answers, and has not reported its verdict yet.
  auto status = supervisor_status(*this, 10s);
  BOOST_TEST(status.find("\"name\":\"test_core_armed\"") != std::string::npos, status);
  BOOST_TEST(wait_exit(1s) == -1);
  blocker->commit();
  blocker.reset();
  BOOST_TEST(wait_exit(15s) == 1);
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox WHERE kind = 'core_group_failure'"
                   " AND subject = 'test_core_armed'") == 1);
}

BOOST_FIXTURE_TEST_CASE(pass_errors_are_counted_and_the_worker_continues, test::runtime_fixture) {
  auto passes = std::make_shared<std::atomic<int>>(0);
  actors::worker_spec failing{"test_failing_pass", actors::worker_group::core,
                              domain::loop_policy{0.05, 0, false},
                              [passes](db::connection_slot&) -> workers::pass_result {
                                ++*passes;
                                throw std::runtime_error("provider down");
                              }};
  start({failing});
  // Four failures in a row at the interval; the fifth starts the backoff
  // (2^5 = 32 s), so the count stops at 5 for a while.
  BOOST_TEST(eventually([&] { return passes->load() >= 5; }, 5s));
  std::this_thread::sleep_for(1s);
  BOOST_TEST(passes->load() == 5);
  BOOST_TEST(eventually(
      [&] {
        return scalar("SELECT consecutive_errors FROM worker_heartbeats"
                      " WHERE worker_name = 'test_failing_pass'") == "5";
      },
      3s));
  BOOST_TEST(scalar("SELECT status FROM worker_heartbeats WHERE worker_name = "
                    "'test_failing_pass'") == "backing_off");
  BOOST_TEST(stop() == 0); // a failing pass is not a failing worker
}

// SPEC §1: on shutdown the workers end their passes first and the request
// writers stop only after them, so a node result a pass hands over while
// the runtime drains is still written (here it waits for a request another
// transaction holds until after shutdown was asked for).
BOOST_FIXTURE_TEST_CASE(a_result_handed_over_during_shutdown_is_written, test::runtime_fixture) {
  add_template(test::one_node("solo"));
  auto id = create_and_approve("solo");
  exec("UPDATE movement_requests SET request_state = 'EXECUTING' WHERE id = '" + id + "'");
  exec("UPDATE movement_request_nodes SET node_state = 'SUBMITTED', attempt_no = 1,"
       " idempotency_key = id || ':1', claim_token = gen_random_uuid(), started_at = now(),"
       " next_observe_at = now() WHERE request_id = '" +
       id + "'");
  auto holding = db::connect(url);
  std::unique_ptr<pqxx::work> holder;
  std::mutex m;
  std::atomic<bool> observing{false};
  adjust_providers = [&](domain::provider_registry& providers) {
    test::hook_sim(providers)->before_observe = [&] {
      std::lock_guard<std::mutex> lock(m);
      if (holder)
        return;
      // After the claim ended, before the result reaches a writer.
      holder = std::make_unique<pqxx::work>(*holding);
      holder->exec("SELECT 1 FROM movement_requests WHERE id = '" + id + "' FOR UPDATE");
      observing = true;
    };
  };
  start();
  BOOST_REQUIRE(eventually([&] { return observing.load(); }, 15s));
  rt->shutdown();
  std::this_thread::sleep_for(300ms); // the writer meets the held row meanwhile
  {
    std::lock_guard<std::mutex> lock(m);
    holder->abort();
  }
  BOOST_TEST(wait_exit(20s) == 0);
  BOOST_TEST(scalar("SELECT node_state || ' ' || observe_count FROM movement_request_nodes"
                    " WHERE request_id = '" +
                    id + "'") == "COMPLETED 1");
  BOOST_TEST(snapshot(id).request_state == domain::request_state::completed);
}

BOOST_FIXTURE_TEST_CASE(heartbeats_are_seeded_for_the_network_class, test::runtime_fixture) {
  settings.network_class = "testnet";
  apply_settings();
  start();
  for (auto* w : {"node_dispatcher", "node_observer", "node_recovery", "reconcile_sweep"})
    BOOST_TEST(count(std::string("SELECT count(*) FROM worker_heartbeats WHERE worker_name = '") +
                     w + "' AND network_class = 'testnet' AND runtime_node = 'test-node'") == 1);
  BOOST_TEST(stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
