// The cluster_lease pass after a database outage longer than the lease
// (SPEC §8): every lease has expired by then, so the process that
// reconnects first declares no peer dead until it has renewed for a full
// lease itself. A peer that renews meanwhile keeps its work; one that never
// comes back (really cut off) is taken over a lease later, and stops when
// it does come back. Leases of 1 s keep these cases short.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "actors/workers/cluster_lease.hpp"
#include "persistence/cluster_store.hpp"
#include "persistence/db.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

constexpr double lease = 1;

double seconds_since(steady::time_point t) {
  return std::chrono::duration<double>(steady::now() - t).count();
}

struct outage_fixture : db_fixture {
  workers::suspect_peers suspects;
  workers::lease_continuity continuity;

  outage_fixture() {
    settings.cluster_lease_seconds = lease;
    apply_settings();
    add_template(one_node("solo"));
    exec("INSERT INTO cluster_nodes (runtime_node, host) VALUES ('test-node', 'h1')");
  }

  workers::pass_result pass() {
    return workers::cluster_lease_pass(conn, engine(), suspects, continuity);
  }

  /// The database goes away under the lease pass and comes back: the pass
  /// fails, and the loop runner drops its connection.
  void outage() {
    auto pid = conn.get().backendpid();
    exec("SELECT pg_terminate_backend(" + std::to_string(pid) + ")");
    bool failed = false;
    try {
      pass();
    } catch (const std::exception& e) {
      failed = db::is_connection_error(e);
    }
    BOOST_REQUIRE_MESSAGE(failed, "the pass must fail on the lost connection");
    conn.reset();
  }

  /// A peer whose lease expired while nobody could renew, holding a node
  /// in SUBMITTING.
  std::string stale_peer_with_a_claim(const std::string& peer) {
    exec("INSERT INTO cluster_nodes (runtime_node, host, last_seen_at) VALUES ('" + peer +
         "', 'h2', now() - interval '1 minute')");
    auto id = create_and_approve("solo");
    auto n = node_id(*this, id);
    exec("UPDATE movement_requests SET request_state = 'EXECUTING' WHERE id = '" + id + "'");
    exec("UPDATE movement_request_nodes SET node_state = 'SUBMITTING', attempt_no = 1,"
         " idempotency_key = id || ':1', claim_token = gen_random_uuid(), claimed_by = '" +
         peer + "', claimed_at = now(), started_at = now(), ever_submitted = true WHERE id = '" +
         n + "'");
    return n;
  }

  bool row_of(const std::string& node) {
    return count("SELECT count(*) FROM cluster_nodes WHERE runtime_node = '" + node + "'") == 1;
  }

  void renew_as(const std::string& node) {
    pqxx::work tx(*other);
    BOOST_REQUIRE(db::renew_lease(tx, node));
    tx.commit();
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(lease_outage_failover)

BOOST_FIXTURE_TEST_CASE(no_peer_is_taken_over_before_a_full_lease_of_renewals_after_a_reconnect,
                        outage_fixture) {
  BOOST_REQUIRE(pass().fatal.empty());
  outage();
  auto n = stale_peer_with_a_claim("cut-off");
  auto reconnected = steady::now();
  auto first = pass();
  BOOST_TEST(first.fatal.empty(), first.fatal);
  BOOST_TEST(first.processed == 0);
  BOOST_TEST(row_of("cut-off"));
  BOOST_TEST(node_col(*this, n, "node_state") == "SUBMITTING");
  // It looks again when the wait is over, not a renew interval later.
  BOOST_REQUIRE(first.next_due_in_seconds);
  BOOST_TEST(*first.next_due_in_seconds > lease - 0.2);
  BOOST_TEST(*first.next_due_in_seconds <= lease + 0.05);

  // The peer never renews: a full lease of this process's renewals later it
  // is taken over, as any dead peer.
  double taken_after = -1;
  while (seconds_since(reconnected) < 3 * lease) {
    auto out = pass();
    BOOST_REQUIRE(out.fatal.empty());
    if (!row_of("cut-off")) {
      taken_after = seconds_since(reconnected);
      BOOST_TEST(out.processed == 1);
      break;
    }
    std::this_thread::sleep_for(100ms);
  }
  BOOST_TEST_MESSAGE("reconnect -> take-over " << taken_after << " s");
  BOOST_TEST(taken_after >= lease);
  BOOST_TEST(taken_after < lease + 0.5);
  BOOST_TEST(node_col(*this, n, "node_state") == "UNKNOWN");
  BOOST_TEST(node_col(*this, n, "error_code") == "RUNTIME_NODE_LOST");

  // When the cut-off process comes back, its renewal finds its row gone.
  workers::suspect_peers its_suspects;
  workers::lease_continuity its_continuity;
  auto its_settings = settings;
  its_settings.runtime_node = "cut-off";
  workers::engine its_engine{ctx->plans, ctx->providers, its_settings};
  db::connection_slot its_conn(url);
  auto back = workers::cluster_lease_pass(its_conn, its_engine, its_suspects, its_continuity);
  BOOST_TEST(!back.fatal.empty());
}

BOOST_FIXTURE_TEST_CASE(a_peer_that_renews_after_the_outage_keeps_its_work, outage_fixture) {
  BOOST_REQUIRE(pass().fatal.empty());
  outage();
  auto n = stale_peer_with_a_claim("slow-to-reconnect");
  auto token = node_col(*this, n, "claim_token");
  auto reconnected = steady::now();
  BOOST_REQUIRE(pass().fatal.empty()); // this process is back first
  std::this_thread::sleep_for(300ms);
  renew_as("slow-to-reconnect"); // the peer is back too, its row untouched
  while (seconds_since(reconnected) < 2 * lease) {
    BOOST_REQUIRE(pass().fatal.empty());
    renew_as("slow-to-reconnect");
    std::this_thread::sleep_for(100ms);
  }
  BOOST_TEST(row_of("slow-to-reconnect"));
  BOOST_TEST(node_col(*this, n, "node_state") == "SUBMITTING");
  BOOST_TEST(node_col(*this, n, "claim_token") == token);
  BOOST_TEST(node_col(*this, n, "claimed_by") == "slow-to-reconnect");
}

BOOST_FIXTURE_TEST_CASE(a_renewal_a_full_lease_after_the_previous_one_counts_as_a_reconnect,
                        outage_fixture) {
  // No pass failed, but the database (or this process) stood still for
  // longer than the lease: the peers could not renew either.
  BOOST_REQUIRE(pass().fatal.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(lease * 1000) + 100));
  stale_peer_with_a_claim("stalled");
  BOOST_REQUIRE(pass().fatal.empty());
  BOOST_TEST(row_of("stalled"));
}

BOOST_FIXTURE_TEST_CASE(a_process_that_saw_no_outage_takes_an_expired_peer_over_at_once,
                        outage_fixture) {
  BOOST_REQUIRE(pass().fatal.empty());
  auto n = stale_peer_with_a_claim("dead");
  auto out = pass();
  BOOST_TEST(out.processed == 1);
  BOOST_TEST(!row_of("dead"));
  BOOST_TEST(node_col(*this, n, "node_state") == "UNKNOWN");
}

BOOST_AUTO_TEST_SUITE_END()
