// The three core passes drive a movement end to end on the real database.
#include <boost/test/unit_test.hpp>

#include "actors/workers/node_dispatcher.hpp"
#include "actors/workers/node_observer.hpp"
#include "tests/support/db_fixture.hpp"

using namespace mg;

namespace {

const char* chain2 = R"({"template_key": "chain2", "version": 1,
  "nodes": [{"node_key": "a", "action_type": "step", "side_effect": true},
            {"node_key": "b", "action_type": "step", "config": {"ref": "$ref:a.tx_hash"}}],
  "edges": [["a", "b"]]})";

} // namespace

BOOST_AUTO_TEST_SUITE(flow)

BOOST_FIXTURE_TEST_CASE(chain_completes_through_the_passes, test::db_fixture) {
  add_template(chain2);
  auto id = create_and_approve("chain2");
  BOOST_TEST(node_state(id, "a") == "READY");
  BOOST_TEST(node_state(id, "b") == "BLOCKED");

  auto d = workers::dispatch_pass(conn, engine());
  BOOST_TEST(d.processed == 1);
  BOOST_TEST(node_state(id, "a") == "SUBMITTED");
  BOOST_TEST(snapshot(id).request_state == "EXECUTING");
  BOOST_TEST(d.wake_observer);

  auto o = workers::observe_pass(conn, engine());
  BOOST_TEST(o.processed == 1);
  BOOST_TEST(node_state(id, "a") == "COMPLETED");
  BOOST_REQUIRE(o.reconcile.size() == 1u);
  auto r = reconcile(id);
  BOOST_TEST(r.activated == 1);
  BOOST_TEST(node_state(id, "b") == "READY");

  workers::dispatch_pass(conn, engine());
  workers::observe_pass(conn, engine());
  reconcile(id);
  BOOST_TEST(snapshot(id).request_state == "COMPLETED");
  // b's config $ref resolved against a's provider_refs
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger") == 2);
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE event_type = 'request_completed'") ==
             1);
}

BOOST_AUTO_TEST_SUITE_END()
