// A dispatcher whose result commit loses its connection (database restart)
// commits the result after reconnecting, still conditional on the claim.
#include <boost/test/unit_test.hpp>

#include "tests/support/runtime_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(db_outage)

BOOST_FIXTURE_TEST_CASE(submit_result_is_committed_after_reconnecting, test::runtime_fixture) {
  add_template(R"({"template_key": "held", "version": 1,
    "nodes": [{"node_key": "a", "action_type": "step", "side_effect": true,
               "config": {"sim": {"submit_hold_ms": 1500}}}], "edges": []})");
  start();
  auto id = approve_and_notify("held");
  // The provider has recorded the submit; the dispatcher is waiting for its answer.
  BOOST_REQUIRE(eventually([&] { return count("SELECT count(*) FROM sim_ledger") == 1; }, 5s));
  BOOST_TEST(node_state(id, "a") == "SUBMITTING");
  // Kill every dispatcher's connection (node_dispatcher, node_dispatcher_2,
  // ...), as a database restart would: whichever instance claimed the node
  // holds its connection across the submit.
  BOOST_TEST(count("SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                   " WHERE application_name ~ '^movegate:node_dispatcher(_[0-9]+)?$'"
                   " AND datname = current_database()) t") >= 1);
  BOOST_TEST(eventually(
      [&] { return snapshot(id).request_state == domain::request_state::completed; }, 10s));
  BOOST_TEST(scalar("SELECT attempt_no FROM movement_request_nodes") == "1");
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger") == 1); // no second submit
}

BOOST_AUTO_TEST_SUITE_END()
