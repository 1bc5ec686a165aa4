// Wake-ups and drain passes make the common path fast; with
// MG_WAKEUPS_ENABLED=false the reference's polling timing holds.
#include <boost/test/unit_test.hpp>

#include "config/metrics.hpp"
#include "persistence/db.hpp"
#include "persistence/movement_store.hpp"
#include "tests/support/runtime_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

const char* chain3 = R"({"template_key": "chain3", "version": 1,
  "nodes": [{"node_key": "a", "action_type": "step", "side_effect": true},
            {"node_key": "b", "action_type": "step"},
            {"node_key": "c", "action_type": "step"}],
  "edges": [["a", "b"], ["b", "c"]]})";

/// Roots that stay OBSERVING for a long time: no completion, so no further
/// wake-up reaches the dispatcher after the first.
const char* parked = R"({"template_key": "parked", "version": 1,
  "nodes": [{"node_key": "a", "action_type": "step",
             "config": {"sim": {"polls_until_done": 1000, "retry_after_seconds": 300}}}],
  "edges": []})";

void slow_polling(config::settings& s) {
  s.node_dispatch_interval_seconds = 30;
  s.node_observe_interval_seconds = 30;
  s.reconcile_interval_seconds = 30;
}

/// Loop passes worker `name` has run in this process.
double passes_of(const std::string& name) {
  return metrics::registry::global()
      .get_counter("movegate_worker_iterations_total", "Loop passes run.", {{"worker", name}})
      .value();
}

} // namespace

BOOST_AUTO_TEST_SUITE(wakeups)

BOOST_FIXTURE_TEST_CASE(wakeups_drive_a_chain_far_faster_than_the_poll_interval,
                        test::runtime_fixture) {
  slow_polling(settings);
  apply_settings();
  add_template(chain3);
  start();
  std::this_thread::sleep_for(300ms); // the start passes are done
  auto id = approve_and_notify("chain3");
  BOOST_TEST(eventually(
      [&] { return snapshot(id).request_state == domain::request_state::completed; }, 3s));
}

BOOST_FIXTURE_TEST_CASE(wakeups_off_waits_for_the_reference_interval, test::runtime_fixture) {
  slow_polling(settings);
  settings.wakeups_enabled = false;
  apply_settings();
  add_template(chain3);
  start();
  std::this_thread::sleep_for(300ms);
  auto id = approve_and_notify("chain3");
  std::this_thread::sleep_for(2s);
  BOOST_TEST(node_state(id, "a") == "READY"); // next dispatcher tick is 30 s away
}

BOOST_FIXTURE_TEST_CASE(notify_from_another_process_wakes_the_dispatcher, test::runtime_fixture) {
  slow_polling(settings);
  apply_settings();
  add_template(chain3);
  start();
  std::this_thread::sleep_for(300ms);
  // Approve only in the database (as another process would): the NOTIFY
  // is the only signal.
  auto id = create_and_approve("chain3");
  BOOST_TEST(eventually([&] { return node_state(id, "a") != "READY"; }, 2s));
}

BOOST_FIXTURE_TEST_CASE(an_approval_made_here_wakes_one_dispatcher_for_its_one_root,
                        test::runtime_fixture) {
  slow_polling(settings);
  settings.node_dispatchers = 3;
  apply_settings();
  add_template(chain3);
  start();
  const std::vector<std::string> dispatchers{"node_dispatcher", "node_dispatcher_2",
                                             "node_dispatcher_3"};
  // The start passes, and the listener's first (it wakes every dispatcher
  // once, for work made ready while nobody listened), are over.
  BOOST_REQUIRE(eventually(
      [&] {
        bool all = passes_of("dispatch_listener") >= 1;
        for (auto& d : dispatchers)
          all &= passes_of(d) >= 1;
        return all;
      },
      10s));
  std::this_thread::sleep_for(500ms);
  std::vector<double> before;
  for (auto& d : dispatchers)
    before.push_back(passes_of(d));
  // Approved as this process's API does: its own NOTIFY, announced
  // in-process with the one root it made READY.
  auto id = create("chain3");
  auto api = db::connect(db::with_application_name(url, db::api_application_name()));
  {
    pqxx::work tx(*api);
    db::approve_request(tx, ctx->plans, id, "approver", ctx->e.reconcile_settings());
    tx.commit();
  }
  rt->notify_changed(id, {true, 1});
  BOOST_TEST(eventually(
      [&] { return snapshot(id).request_state == domain::request_state::completed; }, 5s));
  std::this_thread::sleep_for(500ms); // room for a stray wake-up to show
  int woken = 0;
  for (size_t i = 0; i < dispatchers.size(); ++i)
    woken += passes_of(dispatchers[i]) > before[i];
  BOOST_TEST(woken == 1); // the others would only race it for the node and miss
}

BOOST_FIXTURE_TEST_CASE(a_pass_that_processed_an_item_is_followed_at_once, test::runtime_fixture) {
  slow_polling(settings);
  apply_settings();
  add_template(parked);
  start();
  std::this_thread::sleep_for(300ms);
  // Five approvals in one transaction: one NOTIFY, one wake-up.
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i)
    ids.push_back(create("parked"));
  {
    pqxx::work tx(*other);
    for (auto& id : ids)
      db::approve_request(tx, ctx->plans, id, "approver", ctx->e.reconcile_settings());
    tx.commit();
  }
  auto submitted = [&] {
    return count("SELECT count(*) FROM movement_request_nodes WHERE node_state <> 'READY'");
  };
  BOOST_TEST(eventually([&] { return submitted() == 5; }, 2s));
}

BOOST_FIXTURE_TEST_CASE(several_dispatchers_submit_side_by_side, test::runtime_fixture) {
  settings.node_dispatchers = 3;
  apply_settings();
  add_template(R"({"template_key": "slow_submit", "version": 1,
    "nodes": [{"node_key": "a", "action_type": "step",
               "config": {"sim": {"submit_delay_ms": 1500}}}], "edges": []})");
  start();
  for (int i = 0; i < 3; ++i)
    approve_and_notify("slow_submit");
  // Each dispatcher holds one node in its slow submit; one dispatcher alone
  // would have only one SUBMITTING node at a time.
  BOOST_TEST(eventually(
      [&] {
        return count("SELECT count(*) FROM movement_request_nodes"
                     " WHERE node_state = 'SUBMITTING'") == 3;
      },
      1200ms));
  BOOST_TEST(count("SELECT count(DISTINCT claimed_by) FROM movement_request_nodes") == 1);
}

// Idle workers sleep their interval: nothing in flight must not read as
// "a node is due now" (the observer once spun at 500 passes a second).
BOOST_FIXTURE_TEST_CASE(idle_workers_sleep_their_interval, test::runtime_fixture) {
  start(); // nothing to do at all
  std::this_thread::sleep_for(1500ms);
  auto iterations = [&](const char* worker) {
    return count(std::string("SELECT iterations FROM worker_heartbeats WHERE worker_name = '") +
                 worker + "'");
  };
  auto before = iterations("node_observer") + iterations("node_dispatcher");
  std::this_thread::sleep_for(2500ms);
  // Observer interval 5 s, dispatcher 2 s: at most a couple of passes each.
  BOOST_TEST(iterations("node_observer") + iterations("node_dispatcher") - before <= 4);
}

// Work whose rows another transaction holds (a slow provider call, say) is
// retried soon, then less and less often: never a busy spin.
BOOST_FIXTURE_TEST_CASE(locked_work_is_retried_with_doubling_delays, test::runtime_fixture) {
  slow_polling(settings);
  apply_settings();
  add_template(chain3);
  start();
  std::this_thread::sleep_for(300ms);
  auto id = create("chain3");
  // Approve by hand (no NOTIFY), then hold the request row.
  exec("UPDATE movement_requests SET request_state = 'APPROVED' WHERE id = '" + id + "'");
  exec("UPDATE movement_request_nodes SET node_state = 'READY' WHERE node_key = 'a'");
  pqxx::work holder(*other);
  holder.exec("SELECT 1 FROM movement_requests WHERE id = '" + id + "' FOR UPDATE");
  auto passes = [&] {
    std::string status;
    (*self)
        ->request(rt->links()->dispatchers.front(), 5s, actors::status_atom::value)
        .receive([&](const std::string& s) { status = s; }, [](caf::error&) {});
    auto at = status.find("\"iterations\":");
    return std::stol(status.substr(at + 13));
  };
  auto before = passes();
  rt->links()->wake_dispatchers();
  std::this_thread::sleep_for(2500ms);
  auto during = passes() - before;
  // 5, 10, 20 … ms: about ten passes in 2.5 s, not hundreds.
  BOOST_TEST(during >= 3);
  BOOST_TEST(during <= 15);
  holder.commit();
  BOOST_TEST(eventually([&] { return node_state(id, "a") != "READY"; }, 3s));
}

BOOST_AUTO_TEST_SUITE_END()
