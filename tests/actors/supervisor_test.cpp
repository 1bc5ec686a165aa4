// actors/supervisor on CAF's deterministic scheduler, with scripted members
// and a scripted pager in place of loop workers and PostgreSQL: who is
// stopped, restarted, linked and woken, and when the verdict goes out, are
// checked message by message, with no timing involved.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "actors/supervisor.hpp"

using namespace mg;

namespace {

/// What happened to the scripted members, in order ("wake:x", "down:x").
struct script {
  std::vector<std::string> events;
  std::map<std::string, int> spawned;
  std::map<std::string, caf::actor> live;
  std::vector<std::string> pages; // "worker: why"
  caf::actor pager;
  std::optional<int> verdict;
  /// Dispatchers registered in the links when each member was first woken.
  std::vector<size_t> dispatchers_at_wake;
};

actors::worker_actor::behavior_type scripted_member(actors::worker_actor::pointer self,
                                                    std::string name, std::shared_ptr<script> log,
                                                    std::shared_ptr<actors::runtime_links> links) {
  self->attach_functor([=](const caf::error&) { log->events.push_back("down:" + name); });
  return {
      [](actors::tick_atom, uint64_t) {},
      [=](actors::wake_atom) {
        log->events.push_back("wake:" + name);
        log->dispatchers_at_wake.push_back(links->dispatchers.size());
      },
      [](actors::status_atom) { return std::string("{}"); },
  };
}

/// Pages until the test lets it finish, so the verdict's wait shows.
caf::behavior scripted_pager(caf::event_based_actor*) {
  return {[](actors::done_atom) {
  }};
}

caf::behavior verdict_waiter(caf::event_based_actor*, std::shared_ptr<script> log) {
  return {[=](actors::done_atom, int code) {
    log->verdict = code;
  }};
}

actors::worker_spec spec(std::string name, actors::worker_group group,
                         actors::worker_link link = actors::worker_link::none) {
  actors::worker_spec s{std::move(name), group, domain::loop_policy{1, 0, true}, nullptr};
  s.link = link;
  return s;
}

struct supervisor_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  std::shared_ptr<script> log = std::make_shared<script>();
  std::shared_ptr<actors::runtime_links> links = std::make_shared<actors::runtime_links>();
  caf::actor registry; // a fixed member: core, outlives the drain
  actors::supervisor_actor sup;

  supervisor_fixture() {
    cfg.set("scheduler.policy", caf::atom("testing"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    std::vector<actors::worker_spec> specs = {
        spec("dispatcher_a", actors::worker_group::core, actors::worker_link::dispatcher),
        spec("dispatcher_b", actors::worker_group::core, actors::worker_link::dispatcher),
        spec("observer", actors::worker_group::core, actors::worker_link::observer),
        spec("lease", actors::worker_group::core, actors::worker_link::lease),
        spec("sidecar", actors::worker_group::sidecar),
    };
    specs[3].outlives_drain = true;
    registry = sys->spawn([](caf::event_based_actor*) -> caf::behavior {
      return {[](actors::wake_atom) {
      }};
    });
    auto waiter = sys->spawn(verdict_waiter, log);
    actors::worker_env env{"", "test-node", "test", true, links};
    sup = sys->spawn(actors::supervisor, specs, env,
                     std::vector<actors::fixed_member>{{"registry", registry}}, waiter, hooks());
    sched->run();
  }

  ~supervisor_fixture() {
    for (auto& [name, h] : log->live)
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(registry, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
    if (log->pager)
      caf::anon_send_exit(log->pager, caf::exit_reason::user_shutdown);
    sched->run();
  }

  actors::supervisor_hooks hooks() {
    auto l = log;
    auto links_ = links;
    return {
        [l, links_](caf::actor_system& s, const actors::worker_spec& w, const actors::worker_env&) {
          auto h = s.spawn(scripted_member, w.name, l, links_);
          ++l->spawned[w.name];
          l->live[w.name] = caf::actor_cast<caf::actor>(h);
          return h;
        },
        [l](caf::actor_system& s, const actors::worker_env&, const std::string& worker,
            const std::string& why) {
          l->pages.push_back(worker + ": " + why);
          l->pager = s.spawn(scripted_pager);
          return l->pager;
        },
    };
  }

  void crash(const std::string& name) {
    caf::anon_send_exit(log->live.at(name), caf::exit_reason::kill);
    sched->run();
  }

  void finish_page() {
    caf::anon_send_exit(log->pager, caf::exit_reason::user_shutdown);
    sched->run();
  }

  void let_backoffs_pass() {
    sched->trigger_timeouts();
    sched->run();
  }

  bool happened(const std::string& event) const {
    return std::count(log->events.begin(), log->events.end(), event) > 0;
  }

  size_t position(const std::string& event) const {
    return std::find(log->events.begin(), log->events.end(), event) - log->events.begin();
  }

  std::string status() {
    std::string out;
    auto probe = sys->spawn([&out, s = sup](caf::event_based_actor* me) {
      me->request(s, caf::infinite, actors::status_atom::value).then([&out](const std::string& r) {
        out = r;
      });
    });
    sched->run();
    return out;
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(supervisor)

BOOST_FIXTURE_TEST_CASE(members_are_woken_only_once_every_link_is_registered, supervisor_fixture) {
  for (auto* name : {"dispatcher_a", "dispatcher_b", "observer", "lease", "sidecar"})
    BOOST_TEST(happened(std::string("wake:") + name), name);
  BOOST_REQUIRE(log->dispatchers_at_wake.size() == 5u);
  for (auto n : log->dispatchers_at_wake)
    BOOST_TEST(n == 2u);
  BOOST_TEST(links->dispatcher_busy.size() == 2u);
  BOOST_TEST((links->observer.address() == log->live.at("observer").address()));
  BOOST_TEST((links->lease.address() == log->live.at("lease").address()));
  BOOST_TEST(!log->verdict);
}

BOOST_FIXTURE_TEST_CASE(a_core_failure_stops_everyone_and_the_verdict_waits_for_the_page,
                        supervisor_fixture) {
  crash("observer");
  BOOST_REQUIRE(log->pages.size() == 1u);
  BOOST_TEST(log->pages[0].rfind("observer: ", 0) == 0u, log->pages[0]);
  for (auto* name : {"dispatcher_a", "dispatcher_b", "sidecar", "lease"})
    BOOST_TEST(happened(std::string("down:") + name), name);
  // The lease outlives the drain: it goes once the other workers are down.
  BOOST_TEST(position("down:lease") > position("down:dispatcher_a"));
  BOOST_TEST(position("down:lease") > position("down:sidecar"));
  BOOST_TEST(!log->verdict); // the page is still being written
  finish_page();
  BOOST_REQUIRE(log->verdict);
  BOOST_TEST(*log->verdict == 1);
  BOOST_TEST(log->spawned.at("observer") == 1); // a core member is never restarted
}

BOOST_FIXTURE_TEST_CASE(a_sidecar_crash_restarts_it_after_its_backoff_and_touches_nothing_else,
                        supervisor_fixture) {
  crash("sidecar");
  BOOST_TEST(log->pages.empty());
  BOOST_TEST(log->spawned.at("sidecar") == 1); // not before its backoff
  for (auto* name : {"dispatcher_a", "dispatcher_b", "observer", "lease"})
    BOOST_TEST(!happened(std::string("down:") + name), name);
  let_backoffs_pass();
  BOOST_TEST(log->spawned.at("sidecar") == 2);
  BOOST_TEST(std::count(log->events.begin(), log->events.end(), "wake:sidecar") == 2);
  BOOST_TEST(status().find(R"("name":"sidecar","group":"sidecar","running":true,"crashes":1)") !=
             std::string::npos);
  BOOST_TEST(!log->verdict);
}

BOOST_FIXTURE_TEST_CASE(shutdown_stops_the_lease_last_and_reports_exit_0, supervisor_fixture) {
  caf::anon_send(sup, actors::shutdown_atom::value);
  sched->run();
  for (auto* name : {"dispatcher_a", "dispatcher_b", "observer", "sidecar"})
    BOOST_TEST(position("down:lease") > position(std::string("down:") + name), name);
  BOOST_TEST(log->pages.empty());
  BOOST_REQUIRE(log->verdict);
  BOOST_TEST(*log->verdict == 0);
}

BOOST_FIXTURE_TEST_CASE(a_sidecar_whose_backoff_ends_after_shutdown_stays_down,
                        supervisor_fixture) {
  crash("sidecar");
  caf::anon_send(sup, actors::shutdown_atom::value);
  sched->run();
  BOOST_REQUIRE(log->verdict);
  BOOST_TEST(*log->verdict == 0);
  let_backoffs_pass();
  BOOST_TEST(log->spawned.at("sidecar") == 1);
}

BOOST_AUTO_TEST_SUITE_END()
