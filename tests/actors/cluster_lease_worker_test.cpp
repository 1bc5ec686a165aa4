// The cluster_lease core worker in a running runtime: it renews the lease,
// and a process whose lease row a survivor took stops with exit code 1
// instead of working on claims that are no longer its own.
#include <boost/test/unit_test.hpp>

#include "tests/support/runtime_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(cluster_lease_worker)

BOOST_FIXTURE_TEST_CASE(the_runtime_joins_and_renews_its_lease, test::runtime_fixture) {
  settings.cluster_lease_renew_seconds = 0.2;
  apply_settings();
  start();
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes WHERE runtime_node = 'test-node'") == 1);
  exec("UPDATE cluster_nodes SET last_seen_at = now() - interval '1 hour'");
  BOOST_TEST(wait_for("SELECT last_seen_at > now() - interval '5 seconds' FROM cluster_nodes"
                      " WHERE runtime_node = 'test-node'",
                      5s));
  BOOST_TEST(stop() == 0);
}

BOOST_FIXTURE_TEST_CASE(a_runtime_whose_lease_was_taken_stops_with_exit_code_1,
                        test::runtime_fixture) {
  settings.cluster_lease_renew_seconds = 0.2;
  apply_settings();
  start();
  exec("DELETE FROM cluster_nodes WHERE runtime_node = 'test-node'"); // a survivor took it
  BOOST_TEST(wait_exit(15s) == 1);
}

BOOST_FIXTURE_TEST_CASE(a_runtime_stopped_cleanly_leaves_so_its_name_can_start_again,
                        test::runtime_fixture) {
  start();
  BOOST_TEST(stop() == 0);
  rt.reset(); // in-process users (bench) start the next runtime right after
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes") == 0);
  stopped = false;
  start();
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes WHERE runtime_node = 'test-node'") == 1);
  BOOST_TEST(stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
