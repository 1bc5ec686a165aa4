// What /metrics reads from PostgreSQL and what the workers count for the
// alert rules (deploy/prometheus): each gauge moves with the rows it
// watches, the hop histogram counts a successor's accepted submit, and a
// takeover of a dead cluster member is counted.
#include <boost/test/unit_test.hpp>

#include "actors/workers/cluster_lease.hpp"
#include "actors/workers/node_dispatcher.hpp"
#include "config/metrics.hpp"
#include "persistence/metrics_store.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

constexpr double lease_seconds = 8;

struct metrics_fixture : db_fixture {
  db::metrics_snapshot read() {
    return db::read_metrics(*other, settings.network_class, lease_seconds);
  }
};

metrics::histogram& hop_histogram() {
  return metrics::registry::global().get_histogram("movegate_hop_latency_seconds", "",
                                                   metrics::duration_buckets());
}

} // namespace

BOOST_AUTO_TEST_SUITE(metrics_store)

BOOST_FIXTURE_TEST_CASE(an_old_ready_node_raises_the_ready_age, metrics_fixture) {
  add_template(one_node("solo"));
  BOOST_TEST(read().oldest_ready_age_seconds == 0); // no READY node
  auto id = create_and_approve("solo");
  BOOST_TEST(read().oldest_ready_age_seconds < 60);
  exec("UPDATE movement_request_nodes SET updated_at = now() - interval '10 minutes'"
       " WHERE request_id = '" +
       id + "'");
  auto age = read().oldest_ready_age_seconds;
  BOOST_TEST(age >= 600);
  BOOST_TEST(age < 3600);
  // A manual READY node waits for an operator, not for the dispatcher.
  exec("UPDATE movement_request_nodes SET action_type = 'manual_confirm' WHERE request_id = '" +
       id + "'");
  BOOST_TEST(read().oldest_ready_age_seconds == 0);
}

BOOST_FIXTURE_TEST_CASE(a_due_pending_callback_raises_the_lag_and_one_backing_off_does_not,
                        metrics_fixture) {
  add_template(one_node("cb_one"));
  auto id = create("cb_one", "{}", "https://receiver.example/cb");
  BOOST_REQUIRE(count("SELECT count(*) FROM movement_callback_outbox WHERE status = 'pending'") ==
                1);
  exec("UPDATE movement_callback_outbox SET created_at = now() - interval '5 minutes',"
       " next_attempt_at = NULL");
  auto lag = read().callback_lag_seconds;
  BOOST_TEST(lag >= 300);
  BOOST_TEST(lag < 3600);
  exec("UPDATE movement_callback_outbox SET next_attempt_at = now() + interval '1 hour'");
  BOOST_TEST(read().callback_lag_seconds == 0); // waiting out its retry delay: not due
  exec("UPDATE movement_callback_outbox SET next_attempt_at = NULL, status = 'dlq'");
  BOOST_TEST(read().callback_lag_seconds == 0);
}

BOOST_FIXTURE_TEST_CASE(cluster_rows_past_their_lease_count_as_expired, metrics_fixture) {
  exec("INSERT INTO cluster_nodes (runtime_node, host) VALUES ('alive', 'h1')");
  auto before = read();
  BOOST_TEST(before.cluster_members_live == 1);
  BOOST_TEST(before.cluster_members_expired == 0);
  exec("INSERT INTO cluster_nodes (runtime_node, host, last_seen_at)"
       " VALUES ('dead', 'h2', now() - interval '1 minute')");
  auto after = read();
  BOOST_TEST(after.cluster_members_live == 1);
  BOOST_TEST(after.cluster_members_expired == 1);
}

BOOST_FIXTURE_TEST_CASE(heartbeats_carry_their_group_and_errors_in_a_row, metrics_fixture) {
  exec("INSERT INTO worker_heartbeats (worker_name, runtime_node, network_class, worker_group,"
       " consecutive_errors, last_heartbeat_at) VALUES ('node_observer', 'n1', '" +
       settings.network_class + "', 'core', 4, now() - interval '2 minutes')");
  auto s = read();
  BOOST_REQUIRE_EQUAL(s.heartbeats.size(), 1u);
  BOOST_TEST(s.heartbeats[0].group == "core");
  BOOST_TEST(s.heartbeats[0].consecutive_errors == 4);
  BOOST_TEST(s.heartbeats[0].age_seconds >= 120);
}

BOOST_FIXTURE_TEST_CASE(a_successors_accepted_submit_is_one_hop_and_a_roots_is_none,
                        metrics_fixture) {
  add_template(R"({"template_key": "pair", "version": 1,
    "nodes": [{"node_key": "a", "action_type": "chain_transfer", "executor_key": "sim",
               "config": {"sim": {"retry_after_seconds": 30}}},
              {"node_key": "b", "action_type": "chain_transfer", "executor_key": "sim",
               "config": {"sim": {"retry_after_seconds": 30}}}],
    "edges": [["a", "b"]]})");
  auto id = create_and_approve("pair");
  auto& hops = hop_histogram();
  const auto count_before = hops.cumulative().back();
  const double sum_before = hops.sum();
  workers::dispatch_pass(conn, engine()); // the root a: no predecessor, no hop
  BOOST_REQUIRE(node_state(id, "a") == "SUBMITTED");
  BOOST_TEST(hops.cumulative().back() == count_before);

  // a settled 3 s ago; b becomes READY and its submit is the hop.
  exec("UPDATE movement_request_nodes SET node_state = 'COMPLETED',"
       " updated_at = clock_timestamp() - interval '3 seconds'"
       " WHERE request_id = '" +
       id + "' AND node_key = 'a'");
  reconcile(id);
  BOOST_REQUIRE(node_state(id, "b") == "READY");
  workers::dispatch_pass(conn, engine());
  BOOST_REQUIRE(node_state(id, "b") == "SUBMITTED");
  BOOST_TEST(hops.cumulative().back() == count_before + 1);
  const double hop = hops.sum() - sum_before;
  BOOST_TEST(hop >= 3);
  BOOST_TEST(hop < 60);
}

BOOST_FIXTURE_TEST_CASE(taking_over_a_dead_member_is_counted, metrics_fixture) {
  auto& takeovers = metrics::registry::global().get_counter("movegate_cluster_takeovers_total", "");
  const double before = takeovers.value();
  exec("INSERT INTO cluster_nodes (runtime_node, host) VALUES ('" + settings.runtime_node +
       "', 'h1')");
  exec("INSERT INTO cluster_nodes (runtime_node, host, last_seen_at)"
       " VALUES ('dead', 'h2', now() - interval '1 minute')");
  workers::suspect_peers suspects;
  workers::lease_continuity continuity;
  auto out = workers::cluster_lease_pass(conn, engine(), suspects, continuity);
  BOOST_TEST(out.fatal.empty(), out.fatal);
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes WHERE runtime_node = 'dead'") == 0);
  BOOST_TEST(takeovers.value() == before + 1);
}

BOOST_AUTO_TEST_SUITE_END()
