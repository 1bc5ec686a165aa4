// The loop runner on a real (detached) actor with passes that fail on cue:
// the reference's error backoff is not cut short by a wake-up, a success
// resets the error count, and no pass runs once the runtime stops. Each
// check reads the actor's own status reply, so ordering comes from the
// mailbox, not from the clock.
#include <boost/test/unit_test.hpp>

#include "actors/loop_runner.hpp"
#include "tests/support/runtime_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

struct loop_fixture : test::runtime_fixture {
  caf::actor_id spawned = 0;
  actors::worker_actor worker;
  std::shared_ptr<actors::runtime_links> links = std::make_shared<actors::runtime_links>();

  /// Spawns a loop worker whose n-th pass (1-based) fails when fails(n).
  void spawn(std::shared_ptr<std::atomic<int>> passes, std::function<bool(int)> fails,
             double interval_seconds = 0.05) {
    actors::worker_spec spec{"test_loop_runner", actors::worker_group::core,
                             domain::loop_policy{interval_seconds, 0, false},
                             [passes, fails](db::connection_slot&) -> workers::pass_result {
                               if (fails(++*passes))
                                 throw std::runtime_error("provider down");
                               return {};
                             }};
    actors::worker_env env{url, "test-node", "devnet", true, links};
    worker = sys->spawn<caf::detached>(actors::loop_worker, spec, env);
  }

  /// The worker's status line (answered after every message sent before).
  std::string status() {
    std::string out;
    (*self)
        ->request(worker, 10s, actors::status_atom::value)
        .receive([&](const std::string& s) { out = s; }, [&](caf::error&) { out = "error"; });
    return out;
  }

  bool status_has(const std::string& part) { return status().find(part) != std::string::npos; }

  ~loop_fixture() {
    if (worker)
      caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(loop_runner)

BOOST_FIXTURE_TEST_CASE(a_wake_up_does_not_cut_the_error_backoff_short, loop_fixture) {
  auto passes = std::make_shared<std::atomic<int>>(0);
  spawn(passes, [](int) { return true; });
  caf::anon_send(worker, actors::wake_atom::value); // start
  // Five failures in a row at the interval, then the backoff (2^5 = 32 s).
  BOOST_TEST_REQUIRE(eventually([&] { return status_has("\"consecutive_errors\":5"); }, 20s));
  for (int i = 0; i < 3; ++i)
    caf::anon_send(worker, actors::wake_atom::value);
  // A wake that scheduled a pass put it in the mailbox before the second
  // status request, so the second answer would count it.
  status();
  auto after = status();
  BOOST_TEST(after.find("\"iterations\":5,") != std::string::npos, after);
  BOOST_TEST(passes->load() == 5);
}

BOOST_FIXTURE_TEST_CASE(a_wake_up_before_the_fifth_error_still_runs_a_pass, loop_fixture) {
  auto passes = std::make_shared<std::atomic<int>>(0);
  // Every pass fails, and the interval is long: only wake-ups run passes.
  spawn(
      passes, [](int) { return true; }, 300);
  caf::anon_send(worker, actors::wake_atom::value); // start: pass 1
  status();
  auto first = status();
  BOOST_TEST(first.find("\"iterations\":1,") != std::string::npos, first);
  // One error is no backoff: a wake-up runs the next pass at once.
  caf::anon_send(worker, actors::wake_atom::value);
  status();
  auto second = status();
  BOOST_TEST(second.find("\"iterations\":2,") != std::string::npos, second);
  BOOST_TEST(second.find("\"consecutive_errors\":2") != std::string::npos, second);
}

BOOST_FIXTURE_TEST_CASE(a_success_resets_the_error_count, loop_fixture) {
  auto passes = std::make_shared<std::atomic<int>>(0);
  // Four failures, one success, four failures, then successes. Without the
  // reset the sixth pass would be the fifth error and start a 32 s backoff.
  spawn(passes, [](int n) { return n != 5 && n < 10; });
  caf::anon_send(worker, actors::wake_atom::value);
  BOOST_TEST(eventually([&] { return passes->load() >= 11; }, 25s), "passes " << passes->load());
  BOOST_TEST(status_has("\"consecutive_errors\":0"));
}

BOOST_FIXTURE_TEST_CASE(no_pass_starts_once_the_runtime_is_stopping, loop_fixture) {
  auto passes = std::make_shared<std::atomic<int>>(0);
  // A long interval: only wake-ups run passes.
  spawn(
      passes, [](int) { return false; }, 300);
  caf::anon_send(worker, actors::wake_atom::value); // start: pass 1
  status();
  BOOST_TEST_REQUIRE(status_has("\"iterations\":1,"));
  // Between the stop and the supervisor's exit message, wake-ups (and any
  // tick already queued) claim nothing.
  links->stopping = true;
  for (int i = 0; i < 3; ++i)
    caf::anon_send(worker, actors::wake_atom::value);
  status();
  auto after = status();
  BOOST_TEST(after.find("\"iterations\":1,") != std::string::npos, after);
  BOOST_TEST(passes->load() == 1);
}

BOOST_AUTO_TEST_SUITE_END()
