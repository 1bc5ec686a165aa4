// The cluster_lease worker of a running runtime through a stretch of failed
// renewals (SPEC §8): it keeps trying at its renew pace, not the loop
// runner's error backoff (up to 60 s, longer than any lease), so it renews
// again as soon as the database answers — before a peer that reconnected
// first may declare it dead — and it takes no expired peer over until it
// has renewed for a full lease itself.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <iostream>
#include <thread>

#include "tests/support/runtime_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

BOOST_AUTO_TEST_SUITE(lease_outage_failover)

BOOST_FIXTURE_TEST_CASE(renewals_resume_at_the_renew_pace_after_failed_passes,
                        test::runtime_fixture) {
  settings.cluster_lease_renew_seconds = 0.2;
  settings.cluster_lease_seconds = 1;
  apply_settings();
  start();
  // Renewals fail as if the database were away.
  exec("CREATE FUNCTION mg_test_refuse_renewal() RETURNS trigger LANGUAGE plpgsql AS"
       " $$ BEGIN RAISE EXCEPTION 'database away'; END $$");
  exec("CREATE TRIGGER mg_test_refuse_renewal BEFORE UPDATE ON cluster_nodes"
       " FOR EACH ROW EXECUTE FUNCTION mg_test_refuse_renewal()");
  // Past the loop runner's backoff threshold (5 failed passes) it goes on.
  BOOST_REQUIRE(wait_for("SELECT consecutive_errors >= 8 FROM worker_heartbeats"
                         " WHERE worker_name = 'cluster_lease'",
                         5s));
  // A peer that could not renew meanwhile either.
  exec("INSERT INTO cluster_nodes (runtime_node, host, last_seen_at)"
       " VALUES ('peer', 'h2', now() - interval '1 minute')");
  exec("DROP TRIGGER mg_test_refuse_renewal ON cluster_nodes");
  auto back = steady::now();
  BOOST_REQUIRE(wait_for("SELECT last_seen_at > now() - interval '0.5 s' FROM cluster_nodes"
                         " WHERE runtime_node = 'test-node'",
                         2s));
  double renewed_after = std::chrono::duration<double>(steady::now() - back).count();
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes WHERE runtime_node = 'peer'") == 1);
  BOOST_REQUIRE(wait_for("SELECT count(*) = 0 FROM cluster_nodes WHERE runtime_node = 'peer'", 3s));
  double taken_after = std::chrono::duration<double>(steady::now() - back).count();
  std::cout << "lease_outage_failover: renewed " << renewed_after << " s and took the peer over "
            << taken_after << " s after renewals could commit again" << std::endl;
  BOOST_TEST(renewed_after < 0.5);
  BOOST_TEST(taken_after >= 1.0); // a full lease of its own renewals first
  BOOST_TEST(taken_after < 2.0);
  BOOST_TEST(stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
