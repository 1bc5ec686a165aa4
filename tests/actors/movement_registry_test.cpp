// The movement registry and its movement actors on CAF's deterministic
// scheduler, with scripted writers in place of PostgreSQL: every
// message runs in a known order, so coalescing, routing and quitting are
// checked exactly, with no timing involved.
#include <boost/test/unit_test.hpp>

#include <deque>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "actors/movements.hpp"
#include "actors/workers/node_result.hpp"
#include "tests/support/registry_counts.hpp"

using namespace mg;

namespace {

using answer_atom = caf::atom_constant<caf::atom("answer")>;

/// What a scripted writer was asked, in order, and the answers it owes.
struct writer_script {
  std::vector<std::string> asked;
  std::deque<caf::response_promise> owed;
};

/// Holds every reconcile until the test answers it: (answer_atom, true)
/// answers the oldest one, (answer_atom, false) fails it.
caf::behavior scripted_writer(caf::event_based_actor* self, std::shared_ptr<writer_script> script) {
  return {
      [=](actors::reconcile_atom, const std::string& request_id) {
        script->asked.push_back(request_id);
        script->owed.push_back(self->make_response_promise());
      },
      [=](actors::result_atom, const actors::handed_result_ptr& r) {
        script->asked.push_back("result:" + r->node.request_id);
        script->owed.push_back(self->make_response_promise());
      },
      [=](answer_atom, bool ok) {
        if (script->owed.empty()) {
          BOOST_ERROR("answered a reconcile nobody asked for");
          return;
        }
        auto promise = std::move(script->owed.front());
        script->owed.pop_front();
        if (ok)
          promise.deliver(true);
        else
          promise.deliver(caf::make_error(caf::sec::runtime_error, "scripted failure"));
      },
  };
}

using mg::test::registry_counts;

struct coordinator_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  std::vector<caf::actor> writers;
  std::vector<std::shared_ptr<writer_script>> scripts;
  actors::movement_registry_actor registry;

  explicit coordinator_fixture(size_t writer_count = 1) {
    cfg.set("scheduler.policy", caf::atom("testing"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    std::vector<actors::request_writer_actor> handles;
    for (size_t i = 0; i < writer_count; ++i) {
      scripts.push_back(std::make_shared<writer_script>());
      writers.push_back(sys->spawn(scripted_writer, scripts.back()));
      handles.push_back(caf::actor_cast<actors::request_writer_actor>(writers.back()));
    }
    registry = sys->spawn(actors::movement_registry, handles);
    sched->run();
  }

  ~coordinator_fixture() {
    caf::anon_send_exit(registry, caf::exit_reason::user_shutdown);
    for (auto& r : writers)
      caf::anon_send_exit(r, caf::exit_reason::user_shutdown);
    sched->run();
    registry = nullptr;
    writers.clear();
  }

  void changed(const std::string& request_id) {
    caf::anon_send(registry, actors::changed_atom::value, request_id);
    sched->run();
  }

  void answer(bool ok, size_t writer = 0) {
    caf::anon_send(writers.at(writer), answer_atom::value, ok);
    sched->run();
  }

  /// Hands a node result of `request_id` to the registry; the answer lands
  /// in the returned slot ("written", "stale" or "error") once it comes.
  std::shared_ptr<std::string> hand_result(const std::string& request_id) {
    auto slot = std::make_shared<std::string>("no answer");
    auto result = std::make_shared<workers::handed_result>(
        workers::handed_result{{}, {}, db::event_batch(request_id, 5)});
    result->node.request_id = request_id;
    auto reg = registry;
    sys->spawn([=](caf::event_based_actor* self) {
      self->request(reg, caf::infinite, actors::result_atom::value, result)
          .then([=](bool written) { *slot = written ? "written" : "stale"; },
                [=](const caf::error&) { *slot = "error"; });
    });
    sched->run();
    return slot;
  }

  registry_counts counts() {
    auto out = std::make_shared<registry_counts>();
    auto reg = registry;
    sys->spawn([=](caf::event_based_actor* self) {
      self->request(reg, caf::infinite, actors::status_atom::value).then([=](const std::string& s) {
        *out = mg::test::parse_registry_counts(s);
      });
    });
    sched->run();
    return *out;
  }

  writer_script& script(size_t i = 0) { return *scripts.at(i); }
};

struct two_writers : coordinator_fixture {
  two_writers() : coordinator_fixture(2) {}
};

} // namespace

BOOST_AUTO_TEST_SUITE(movement_registry)

BOOST_FIXTURE_TEST_CASE(a_change_starts_a_movement_that_reconciles_once_and_quits,
                        coordinator_fixture) {
  changed("r1");
  BOOST_TEST(script().asked == std::vector<std::string>{"r1"});
  BOOST_TEST(counts().active == 1);

  answer(true);
  auto c = counts();
  BOOST_TEST(c.active == 0);
  BOOST_TEST(c.started == 1);
  BOOST_TEST(script().asked.size() == 1u);
}

BOOST_FIXTURE_TEST_CASE(changes_during_a_reconcile_coalesce_into_one_more_reconcile,
                        coordinator_fixture) {
  changed("r1");
  for (int i = 0; i < 5; ++i)
    changed("r1");
  BOOST_TEST(script().asked.size() == 1u); // one reconcile at a time per request

  answer(true);
  BOOST_TEST(script().asked == (std::vector<std::string>{"r1", "r1"}));
  BOOST_TEST(counts().active == 1);

  answer(true);
  auto c = counts();
  BOOST_TEST(c.active == 0);
  BOOST_TEST(c.started == 1); // one movement actor did both
  BOOST_TEST(script().asked.size() == 2u);
}

BOOST_FIXTURE_TEST_CASE(a_change_after_the_movement_quit_starts_a_fresh_one, coordinator_fixture) {
  changed("r1");
  answer(true);
  changed("r1");
  BOOST_TEST(script().asked.size() == 2u);
  auto c = counts();
  BOOST_TEST(c.active == 1);
  BOOST_TEST(c.started == 2);
}

BOOST_FIXTURE_TEST_CASE(each_request_gets_its_own_movement, coordinator_fixture) {
  changed("r1");
  changed("r2");
  changed("r1"); // r1 is busy: coalesced, not a second actor
  BOOST_TEST(script().asked == (std::vector<std::string>{"r1", "r2"}));
  auto c = counts();
  BOOST_TEST(c.active == 2);
  BOOST_TEST(c.started == 2);
}

BOOST_FIXTURE_TEST_CASE(a_failed_reconcile_ends_the_movement_and_leaves_the_request_to_the_sweep,
                        coordinator_fixture) {
  changed("r1");
  changed("r1"); // pending, but the failure drops it: the flag stays set for the sweep
  answer(false);
  BOOST_TEST(script().asked.size() == 1u);
  BOOST_TEST(counts().active == 0);
}

BOOST_FIXTURE_TEST_CASE(an_unanswered_reconcile_times_out_and_ends_the_movement,
                        coordinator_fixture) {
  changed("r1");
  BOOST_TEST(counts().active == 1);
  sched->clock().advance_time(actors::reconcile_timeout - std::chrono::seconds(1));
  sched->run();
  BOOST_TEST(counts().active == 1);
  sched->clock().advance_time(std::chrono::seconds(1));
  sched->run();
  BOOST_TEST(counts().active == 0);
  BOOST_TEST(script().asked.size() == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_result_goes_through_its_movement_to_the_writer_and_back,
                        coordinator_fixture) {
  auto answered = hand_result("r1");
  BOOST_TEST(script().asked == std::vector<std::string>{"result:r1"});
  BOOST_TEST(*answered == "no answer");
  BOOST_TEST(counts().active == 1); // alive while the result waits
  changed("r1");                    // a reconcile is not held back by a result in flight
  BOOST_TEST(script().asked == (std::vector<std::string>{"result:r1", "r1"}));

  answer(true); // the result
  BOOST_TEST(*answered == "written");
  BOOST_TEST(counts().active == 1); // the reconcile still waits
  answer(true);
  BOOST_TEST(counts().active == 0);
}

BOOST_FIXTURE_TEST_CASE(a_result_the_writer_could_not_write_answers_an_error_and_the_movement_quits,
                        coordinator_fixture) {
  auto answered = hand_result("r1");
  answer(false);
  BOOST_TEST(*answered == "error");
  BOOST_TEST(counts().active == 0);
}

BOOST_FIXTURE_TEST_CASE(one_request_always_goes_to_the_same_writer, two_writers) {
  std::vector<std::string> ids;
  for (int i = 0; i < 15; ++i) // odd: a rotation would move each request
    ids.push_back("request-" + std::to_string(i));
  for (int round = 0; round < 3; ++round) {
    for (auto& id : ids)
      changed(id);
    for (size_t r = 0; r < 2; ++r)
      while (!script(r).owed.empty())
        answer(true, r);
  }
  std::set<std::string> first(script(0).asked.begin(), script(0).asked.end());
  std::set<std::string> second(script(1).asked.begin(), script(1).asked.end());
  BOOST_TEST(script(0).asked.size() + script(1).asked.size() == 3 * ids.size());
  BOOST_TEST(first.size() + second.size() == ids.size()); // no request seen by both
  BOOST_TEST(!first.empty());
  BOOST_TEST(!second.empty());
  BOOST_TEST(counts().active == 0);
}

BOOST_FIXTURE_TEST_CASE(stopping_the_registry_stops_its_movements, coordinator_fixture) {
  changed("r1");
  changed("r2");
  const auto running = sys->registry().running();
  caf::anon_send_exit(registry, caf::exit_reason::user_shutdown);
  sched->run();
  // The registry and both movements (each still waiting for its reconcile) are gone.
  BOOST_TEST(sys->registry().running() == running - 3);
}

BOOST_AUTO_TEST_SUITE_END()
