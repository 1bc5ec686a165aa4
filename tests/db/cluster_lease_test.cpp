// Cluster membership by database lease (SPEC §8) on the real database:
// joining under a live or an expired name, renewing a lease that a survivor
// took, and the take-over of a dead process's claimed work — exactly once,
// with new claim tokens that fence the dead process's late writes.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <string>
#include <thread>

#include "actors/own_name.hpp"
#include "actors/proc_identity.hpp"
#include "persistence/cluster_store.hpp"
#include "persistence/db.hpp"
#include "persistence/node_store.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

constexpr double lease = 8;

void join(db_fixture& f, const std::string& name) {
  auto joined =
      actors::try_claim_name(f.conn.get(), name, {"127.0.0.1", 4242}, lease,
                             f.settings.callback_max_attempts, actors::this_process_identity());
  BOOST_REQUIRE(joined.joined);
}

/// The lease of `name` last renewed `seconds_ago`.
void age_lease(db_fixture& f, const std::string& name, int seconds_ago) {
  f.exec("UPDATE cluster_nodes SET last_seen_at = now() - interval '" +
         std::to_string(seconds_ago) + " seconds' WHERE runtime_node = '" + name + "'");
}

/// A fresh one-node request whose node `by` committed as SUBMITTING
/// (attempt 1) and then went silent; returns the node id.
std::string submitting_node(db_fixture& f, const std::string& by,
                            const std::string& state = "SUBMITTING") {
  auto id = f.create_and_approve("solo");
  auto n = node_id(f, id);
  f.exec("UPDATE movement_requests SET request_state = 'EXECUTING' WHERE id = '" + id + "'");
  f.exec("UPDATE movement_request_nodes SET node_state = '" + state +
         "', attempt_no = 1, idempotency_key = id || ':1', claim_token = gen_random_uuid(),"
         " claimed_by = '" +
         by + "', claimed_at = now(), started_at = now(), ever_submitted = true WHERE id = '" + n +
         "'");
  return n;
}

struct cluster_fixture : db_fixture {
  cluster_fixture() { add_template(one_node("solo")); }

  std::optional<db::takeover> take_over(pqxx::connection& c, const std::string& me) {
    pqxx::work tx(c);
    auto r = db::take_over_one_dead_node(tx, me, lease, settings.callback_max_attempts);
    tx.commit();
    return r;
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(cluster_lease)

BOOST_FIXTURE_TEST_CASE(join_refuses_a_live_name_and_accepts_an_expired_one, cluster_fixture) {
  join(*this, "proc-a");
  try {
    join(*this, "proc-a");
    BOOST_FAIL("a second join under a live name must throw");
  } catch (const std::runtime_error& e) {
    BOOST_TEST(std::string(e.what()).find("'proc-a'") != std::string::npos);
    BOOST_TEST(std::string(e.what()).find("live process") != std::string::npos);
  }
  age_lease(*this, "proc-a", 20);
  exec("UPDATE cluster_nodes SET started_at = now() - interval '1 hour'");
  join(*this, "proc-a");
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes WHERE runtime_node = 'proc-a'"
                   " AND started_at > now() - interval '1 minute'"
                   " AND last_seen_at > now() - interval '1 minute'") == 1);
}

BOOST_FIXTURE_TEST_CASE(rejoin_of_an_expired_name_sends_its_old_claims_to_recovery,
                        cluster_fixture) {
  join(*this, "proc-a");
  auto n = submitting_node(*this, "proc-a");
  age_lease(*this, "proc-a", 20);
  join(*this, "proc-a"); // the restarted process: its previous incarnation's work is stranded
  BOOST_TEST(node_col(*this, n, "node_state") == "UNKNOWN");
  BOOST_TEST(node_col(*this, n, "error_code") == "RUNTIME_NODE_LOST");
}

BOOST_FIXTURE_TEST_CASE(renew_returns_false_once_the_row_was_taken, cluster_fixture) {
  join(*this, "dead");
  join(*this, "alive");
  {
    pqxx::work tx(*other);
    BOOST_TEST(db::renew_lease(tx, "dead"));
    tx.commit();
  }
  BOOST_TEST(!take_over(conn.get(), "alive")); // a fresh lease is not dead
  age_lease(*this, "dead", 9);
  auto taken = take_over(conn.get(), "alive");
  BOOST_REQUIRE(taken);
  BOOST_TEST(taken->dead_node == "dead");
  pqxx::work tx(*other);
  BOOST_TEST(!db::renew_lease(tx, "dead"));
}

BOOST_FIXTURE_TEST_CASE(a_survivor_never_takes_itself_over, cluster_fixture) {
  join(*this, "alive");
  age_lease(*this, "alive", 60);
  BOOST_TEST(!take_over(conn.get(), "alive"));
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes") == 1);
}

BOOST_FIXTURE_TEST_CASE(submitting_node_becomes_unknown_with_a_new_token_and_its_event,
                        cluster_fixture) {
  join(*this, "dead");
  join(*this, "alive");
  auto n = submitting_node(*this, "dead");
  auto request = node_col(*this, n, "request_id");
  auto old_token = node_col(*this, n, "claim_token");
  age_lease(*this, "dead", 9);
  auto taken = take_over(conn.get(), "alive");
  BOOST_REQUIRE(taken);
  BOOST_TEST(taken->sent_to_recovery == 1);
  BOOST_TEST(taken->requests.size() == 1u);
  BOOST_TEST(node_col(*this, n, "node_state") == "UNKNOWN");
  BOOST_TEST(node_col(*this, n, "error_code") == "RUNTIME_NODE_LOST");
  BOOST_TEST(node_col(*this, n, "claimed_by") == "");
  BOOST_TEST(node_col(*this, n, "unknown_since") != "");
  BOOST_TEST(node_col(*this, n, "attempt_no") == "1"); // recovery asks about attempt 1
  auto new_token = node_col(*this, n, "claim_token");
  BOOST_TEST(!new_token.empty());
  BOOST_TEST(new_token != old_token);
  BOOST_TEST(request_col(*this, request, "needs_reconcile") == "t");
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE request_id = '" + request +
                   "' AND event_type = 'node_state_changed' AND node_key = 'a'"
                   " AND payload->>'node_state' = 'UNKNOWN'"
                   " AND payload->'data'->>'error_code' = 'RUNTIME_NODE_LOST'") == 1);
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes WHERE runtime_node = 'dead'") == 0);
}

BOOST_FIXTURE_TEST_CASE(late_write_with_the_old_token_changes_nothing, cluster_fixture) {
  join(*this, "dead");
  join(*this, "alive");
  auto n = submitting_node(*this, "dead");
  std::optional<db::claimed_node> as_dead_read_it;
  {
    pqxx::work tx(*other);
    as_dead_read_it = db::load_node(tx, n);
  }
  age_lease(*this, "dead", 9);
  BOOST_REQUIRE(take_over(conn.get(), "alive"));
  // The dead (frozen) process wakes up and commits its submit result.
  pqxx::work tx(*other);
  db::event_batch events(as_dead_read_it->request_id, settings.callback_max_attempts);
  db::node_update u;
  u.next_state = domain::node_state::submitted;
  BOOST_CHECK_THROW(db::apply_node_update(tx, *as_dead_read_it, u, events), db::stale_write);
  tx.abort();
  BOOST_TEST(node_col(*this, n, "node_state") == "UNKNOWN");
}

BOOST_FIXTURE_TEST_CASE(nodes_of_live_processes_are_untouched, cluster_fixture) {
  join(*this, "dead");
  join(*this, "alive");
  join(*this, "busy");
  auto mine = submitting_node(*this, "busy");
  auto token = node_col(*this, mine, "claim_token");
  auto theirs = submitting_node(*this, "dead");
  age_lease(*this, "dead", 9);
  BOOST_REQUIRE(take_over(conn.get(), "alive"));
  BOOST_TEST(!take_over(conn.get(), "alive"));
  BOOST_TEST(node_col(*this, mine, "node_state") == "SUBMITTING");
  BOOST_TEST(node_col(*this, mine, "claim_token") == token);
  BOOST_TEST(node_col(*this, mine, "claimed_by") == "busy");
  BOOST_TEST(node_col(*this, theirs, "node_state") == "UNKNOWN");
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes") == 2);
}

BOOST_FIXTURE_TEST_CASE(observed_nodes_of_the_dead_node_only_get_a_new_token, cluster_fixture) {
  join(*this, "dead");
  join(*this, "alive");
  auto n = submitting_node(*this, "dead", "OBSERVING");
  auto token = node_col(*this, n, "claim_token");
  age_lease(*this, "dead", 9);
  auto taken = take_over(conn.get(), "alive");
  BOOST_REQUIRE(taken);
  BOOST_TEST(taken->refenced == 1);
  BOOST_TEST(taken->sent_to_recovery == 0);
  BOOST_TEST(node_col(*this, n, "node_state") == "OBSERVING"); // any observer follows it up
  BOOST_TEST(node_col(*this, n, "claim_token") != token);
  BOOST_TEST(node_col(*this, n, "claimed_by") == "");
}

BOOST_FIXTURE_TEST_CASE(two_survivors_take_the_dead_node_exactly_once, cluster_fixture) {
  join(*this, "dead");
  join(*this, "s1");
  join(*this, "s2");
  for (int i = 0; i < 3; ++i)
    submitting_node(*this, "dead");
  age_lease(*this, "dead", 9);
  {
    // s1 holds the dead node's row: s2 skips it instead of waiting.
    pqxx::work t1(conn.get());
    auto first = db::take_over_one_dead_node(t1, "s1", lease, settings.callback_max_attempts);
    BOOST_REQUIRE(first);
    BOOST_TEST(first->sent_to_recovery == 3);
    BOOST_TEST(!take_over(*other, "s2"));
    t1.commit();
  }
  BOOST_TEST(!take_over(*other, "s2"));
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE event_type = 'node_state_changed'"
                   " AND payload->'data'->>'error_code' = 'RUNTIME_NODE_LOST'") == 3);
}

BOOST_FIXTURE_TEST_CASE(racing_survivor_threads_take_each_dead_node_once, cluster_fixture) {
  join(*this, "s1");
  join(*this, "s2");
  for (int d = 0; d < 4; ++d) {
    auto name = "dead-" + std::to_string(d);
    join(*this, name);
    submitting_node(*this, name);
    submitting_node(*this, name);
    age_lease(*this, name, 9);
  }
  std::atomic<int> nodes{0}, deads{0};
  auto survivor = [&](const std::string& me) {
    auto c = db::connect(url);
    while (auto t = take_over(*c, me)) {
      ++deads;
      nodes += t->sent_to_recovery;
    }
  };
  std::thread a(survivor, "s1"), b(survivor, "s2");
  a.join();
  b.join();
  BOOST_TEST(deads.load() == 4);
  BOOST_TEST(nodes.load() == 8);
  BOOST_TEST(count("SELECT count(*) FROM movement_request_nodes WHERE node_state = 'UNKNOWN'"
                   " AND error_code = 'RUNTIME_NODE_LOST'") == 8);
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE event_type = 'node_state_changed'"
                   " AND payload->'data'->>'error_code' = 'RUNTIME_NODE_LOST'") == 8);
}

BOOST_FIXTURE_TEST_CASE(leave_removes_the_row, cluster_fixture) {
  join(*this, "proc-a");
  db::leave_cluster(conn.get(), "proc-a");
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes") == 0);
  join(*this, "proc-a"); // a clean restart is not refused
}

BOOST_AUTO_TEST_SUITE_END()
