// node_dispatcher's batched steps (SPEC §1): one claim transaction for the
// READY nodes of several requests whose executor claims in batch, their
// results in one transaction with a savepoint each, and the inline first
// observation.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "actors/workers/node_dispatcher.hpp"
#include "actors/workers/node_observer.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

/// Approved one-node requests of `key`, oldest first.
std::vector<std::string> approved(db_fixture& f, const std::string& key, int count) {
  std::vector<std::string> ids;
  for (int i = 0; i < count; ++i) {
    ids.push_back(f.create_and_approve(key));
    f.exec("UPDATE movement_request_nodes SET request_created_at = now() - interval '" +
           std::to_string(60 - i) + " seconds' WHERE request_id = '" + ids.back() + "'");
  }
  return ids;
}

/// What a node's history looks like: its events' states, its artifacts'
/// kinds, its observe_count.
std::string history(db_fixture& f, const std::string& node) {
  return f.scalar("SELECT (SELECT string_agg(e.payload->>'node_state', ',' ORDER BY e.seq)"
                  "  FROM movement_events e JOIN movement_request_nodes n"
                  "  ON n.request_id = e.request_id AND e.node_key = n.node_key"
                  "  WHERE n.id = '" +
                  node +
                  "' AND e.event_type = 'node_state_changed')"
                  " || ' | ' || (SELECT string_agg(kind, ',' ORDER BY created_at, kind)"
                  "  FROM node_artifacts WHERE node_id = '" +
                  node +
                  "')"
                  " || ' | ' || (SELECT observe_count FROM movement_request_nodes WHERE id = '" +
                  node + "')");
}

} // namespace

BOOST_AUTO_TEST_SUITE(dispatch_batch)

BOOST_FIXTURE_TEST_CASE(one_pass_claims_all_before_the_first_submit_and_settles_them, db_fixture) {
  // Each submit holds after its ledger row: while the first one holds, every
  // node of the batch is already SUBMITTING (one claim commit, write-ahead).
  add_template(one_node("held", "chain_transfer", R"("config": {"sim": {"submit_hold_ms": 300}})"));
  auto requests = approved(*this, "held", 5);
  long submitting_at_first_submit = -1;
  std::thread watcher([&] {
    auto c = db::connect(url);
    for (int i = 0; i < 500 && submitting_at_first_submit < 0; ++i) {
      pqxx::read_transaction tx(*c);
      if (tx.exec("SELECT 1 FROM sim_ledger").size() > 0)
        submitting_at_first_submit =
            tx.exec("SELECT count(*) FROM movement_request_nodes WHERE node_state = 'SUBMITTING'")
                [0][0]
                    .as<long>();
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  auto r = workers::dispatch_pass(conn, engine());
  watcher.join();
  BOOST_TEST(submitting_at_first_submit == 5);
  BOOST_TEST(r.processed == 5);
  BOOST_TEST(r.stale == 0);
  for (auto& id : requests) {
    BOOST_TEST(node_state(id, "a") == "COMPLETED");
    BOOST_TEST(request_col(*this, id, "request_state") == "COMPLETED");
  }
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger") == 5);
}

BOOST_FIXTURE_TEST_CASE(the_sims_ledger_accepts_a_batch_in_one_write_and_refuses_a_fenced_key,
                        db_fixture) {
  add_template(one_node("solo"));
  auto requests = approved(*this, "solo", 4);
  // Recovery fenced the third node's first attempt before its submit.
  auto fenced = node_id(*this, requests[2]);
  exec("INSERT INTO sim_ledger (idempotency_key, node_id, attempt_no, action_type, fenced)"
       " VALUES ('" +
       fenced + ":1', '" + fenced + "', 1, 'chain_transfer', true)");
  auto r = workers::dispatch_pass(conn, engine());
  BOOST_TEST(r.processed == 4);
  BOOST_TEST(r.stale == 1);
  BOOST_TEST(node_state(requests[2], "a") == "SUBMITTING"); // the refusal changes nothing
  for (int i : {0, 1, 3})
    BOOST_TEST(node_state(requests[i], "a") == "COMPLETED");
  // One statement wrote the three accepted records.
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE NOT fenced") == 3);
  BOOST_TEST(count("SELECT count(DISTINCT xmin::text) FROM sim_ledger WHERE NOT fenced") == 1);
}

BOOST_FIXTURE_TEST_CASE(the_batch_size_caps_a_claim, db_fixture) {
  settings.node_dispatch_batch_size = 2;
  apply_settings();
  add_template(one_node("solo"));
  auto requests = approved(*this, "solo", 3);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 2);
  // FIFO: the two oldest.
  BOOST_TEST(node_state(requests[0], "a") == "COMPLETED");
  BOOST_TEST(node_state(requests[1], "a") == "COMPLETED");
  BOOST_TEST(node_state(requests[2], "a") == "READY");
}

BOOST_FIXTURE_TEST_CASE(nodes_of_executors_that_wait_are_claimed_one_per_transaction, db_fixture) {
  // latency_ms > 0: the sim's preflight and prepare sleep, so they must not
  // hold other requests' locks.
  add_template(one_node("slow", "chain_transfer", R"("config": {"sim": {"latency_ms": 1}})"));
  add_template(one_node("solo"));
  auto slow = approved(*this, "slow", 2);
  auto fast = approved(*this, "solo", 2);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_state(slow[0], "a") != "READY");
  BOOST_TEST(node_state(slow[1], "a") == "READY");
  // A batch that starts with a batchable node leaves the slow ones alone.
  exec("UPDATE movement_request_nodes SET request_created_at = now() - interval '1 hour'"
       " WHERE request_id = '" +
       fast[0] + "'");
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 2);
  BOOST_TEST(node_state(slow[1], "a") == "READY");
  BOOST_TEST(node_state(fast[0], "a") == "COMPLETED");
  BOOST_TEST(node_state(fast[1], "a") == "COMPLETED");
}

BOOST_FIXTURE_TEST_CASE(a_batch_takes_one_node_per_request, db_fixture) {
  add_template(R"({"template_key": "pair", "version": 1, "nodes": [
    {"node_key": "a", "action_type": "step", "executor_key": "sim"},
    {"node_key": "b", "action_type": "step", "executor_key": "sim"}]})");
  auto id = create_and_approve("pair");
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_state(id, "a") == "COMPLETED");
  BOOST_TEST(node_state(id, "b") == "COMPLETED");
  BOOST_TEST(request_col(*this, id, "request_state") == "COMPLETED");
}

BOOST_FIXTURE_TEST_CASE(a_stale_result_is_undone_alone, db_fixture) {
  // The middle request's submit holds after its ledger row: meanwhile its
  // claim token moves (as recovery's would), so only its result is stale.
  add_template(one_node("solo"));
  add_template(
      one_node("held", "chain_transfer", R"("config": {"sim": {"submit_hold_ms": 1500}})"));
  auto first = approved(*this, "solo", 1);
  auto held = approved(*this, "held", 1);
  auto last = approved(*this, "solo", 1);
  auto held_node = node_id(*this, held[0]);
  std::thread mover([&] {
    auto c = db::connect(url);
    for (int i = 0; i < 500; ++i) {
      pqxx::work tx(*c);
      auto n = tx.exec("SELECT count(*) FROM sim_ledger WHERE node_id = '" + held_node + "'");
      if (n[0][0].as<int>() > 0) {
        tx.exec("UPDATE movement_request_nodes SET claim_token = gen_random_uuid() WHERE id = '" +
                held_node + "'");
        tx.commit();
        return;
      }
      tx.commit();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  auto r = workers::dispatch_pass(conn, engine());
  mover.join();
  BOOST_TEST(r.processed == 3);
  BOOST_TEST(r.stale == 1);
  BOOST_TEST(node_state(first[0], "a") == "COMPLETED");
  BOOST_TEST(node_state(last[0], "a") == "COMPLETED");
  BOOST_TEST(node_state(held[0], "a") == "SUBMITTING");
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + held_node +
                   "' AND kind = 'submit_proof'") == 0);
}

BOOST_FIXTURE_TEST_CASE(the_inline_observation_writes_what_the_observer_would, db_fixture) {
  add_template(one_node("solo"));
  auto inline_id = approved(*this, "solo", 1)[0];
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  auto seen_inline = history(*this, node_id(*this, inline_id));

  settings.wakeups_enabled = false; // the reference: the observer observes
  apply_settings();
  auto observed_id = approved(*this, "solo", 1)[0];
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_state(observed_id, "a") == "SUBMITTED");
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 1);
  auto seen_observed = history(*this, node_id(*this, observed_id));

  BOOST_TEST(seen_inline == seen_observed);
  BOOST_TEST(seen_inline.find("SUBMITTED,COMPLETED") != std::string::npos);
  BOOST_TEST(seen_inline.find("submit_proof,observe_proof") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(wakeups_off_claims_one_node_per_pass, db_fixture) {
  settings.wakeups_enabled = false;
  apply_settings();
  add_template(one_node("solo"));
  auto requests = approved(*this, "solo", 3);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_state(requests[0], "a") == "SUBMITTED");
  BOOST_TEST(node_state(requests[1], "a") == "READY");
}

BOOST_FIXTURE_TEST_CASE(an_answer_that_asks_for_a_later_look_is_left_to_the_observer, db_fixture) {
  add_template(
      one_node("later", "chain_transfer", R"("config": {"sim": {"retry_after_seconds": 30}})"));
  auto id = approved(*this, "later", 1)[0];
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_state(id, "a") == "SUBMITTED");
  BOOST_TEST(node_col(*this, node_id(*this, id), "observe_count") == "0");
}

BOOST_AUTO_TEST_SUITE_END()
