// SPEC §4 "an executor's answer is input, too" on the real database: an
// answer a step may not give (or a malformed one) settles that one node
// with PROVIDER_PROTOCOL_ERROR — FAILED before SUBMITTING, UNKNOWN (settled
// at once) from submit, observe and recover — while 20 good nodes of other
// requests in the same passes complete, with no pass throwing (a throwing
// pass is what makes the loop runner back off).
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "actors/workers/node_dispatcher.hpp"
#include "actors/workers/node_observer.hpp"
#include "actors/workers/node_recovery.hpp"
#include "domain/json.hpp"
#include "persistence/db.hpp"
#include "persistence/operator_store.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

constexpr int good_count = 20;

/// A one-node template whose sim node gets `sim` as its config.sim.
std::string sim_template(const std::string& key, const std::string& sim) {
  return one_node(key, "chain_transfer", R"("config": {"sim": )" + sim + "}");
}

/// One bad request first in FIFO order, then `good_count` good ones.
struct population {
  std::string bad;
  std::vector<std::string> good;
};

population create_population(db_fixture& f, const std::string& bad_sim,
                             const std::string& good_sim = "{}") {
  f.add_template(sim_template("bad", bad_sim));
  f.add_template(sim_template("good", good_sim));
  population p;
  p.bad = f.create_and_approve("bad");
  for (int i = 0; i < good_count; ++i)
    p.good.push_back(f.create_and_approve("good"));
  return p;
}

/// Runs dispatch passes until one finds nothing (at most `limit`), each of
/// which must not throw; returns how many passes processed a node.
int drain_dispatch(db_fixture& f, int limit = 100) {
  for (int passes = 0; passes < limit; ++passes) {
    workers::pass_result r;
    BOOST_REQUIRE_NO_THROW(r = workers::dispatch_pass(f.conn, f.engine()));
    if (r.processed == 0)
      return passes;
  }
  return limit;
}

/// One observe pass (batch large enough for everyone), which must not throw.
workers::pass_result observe_all(db_fixture& f) {
  workers::pass_result r;
  BOOST_REQUIRE_NO_THROW(r = workers::observe_pass(f.conn, f.engine()));
  return r;
}

void reconcile_all(db_fixture& f, const population& p) {
  f.reconcile(p.bad);
  for (auto& id : p.good)
    f.reconcile(id);
}

long completed(db_fixture& f, const population& p) {
  long n = 0;
  for (auto& id : p.good)
    n += f.snapshot(id).request_state == domain::request_state::completed ? 1 : 0;
  return n;
}

/// The bad node's state and error code, "STATE/CODE".
std::string bad_outcome(db_fixture& f, const population& p) {
  auto n = node_id(f, p.bad);
  return node_col(f, n, "node_state") + "/" + node_col(f, n, "error_code");
}

void big_batches(db_fixture& f) {
  f.settings.node_observe_batch_size = 64;
  f.settings.node_recovery_batch_size = 256; // 64 per arm: all in the "other" arm
  f.apply_settings();
}

/// Node state changes recorded for the request's node "a", in order.
std::string node_events(db_fixture& f, const std::string& request_id) {
  return f.scalar("SELECT string_agg(payload->>'node_state', ',' ORDER BY seq)"
                  " FROM movement_events WHERE request_id = '" +
                  request_id + "' AND event_type = 'node_state_changed'");
}

} // namespace

BOOST_AUTO_TEST_SUITE(provider_answers)

// Old code: READY from preflight is a legal PREPARING → READY move, so the
// node at the FIFO head was claimed again every pass (an event each time)
// and nothing behind it was dispatched.
BOOST_FIXTURE_TEST_CASE(preflight_protocol_error_fails_the_node_and_the_rest_dispatch,
                        test::reference_db_fixture) {
  big_batches(*this);
  auto p = create_population(*this, R"({"answer": {"preflight": {"next_state": "READY"}}})");
  BOOST_TEST(drain_dispatch(*this) == good_count + 1); // one pass per node, then empty
  BOOST_TEST(bad_outcome(*this, p) == "FAILED/PROVIDER_PROTOCOL_ERROR");
  auto bad = node_id(*this, p.bad);
  BOOST_TEST(node_col(*this, bad, "attempt_no") == "0");
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE node_id = '" + bad + "'") == 0);
  BOOST_TEST(node_events(*this, p.bad) == "READY,FAILED");
  BOOST_TEST(observe_all(*this).processed == good_count);
  reconcile_all(*this, p);
  BOOST_TEST(completed(*this, p) == good_count);
  BOOST_TEST(snapshot(p.bad).request_state == domain::request_state::failed); // no side effect
}

BOOST_FIXTURE_TEST_CASE(preflight_protocol_error_for_an_unknown_state_name,
                        test::reference_db_fixture) {
  big_batches(*this);
  auto p = create_population(*this, R"({"answer": {"preflight": {"next_state": "DONE"}}})");
  BOOST_TEST(drain_dispatch(*this) == good_count + 1);
  BOOST_TEST(bad_outcome(*this, p) == "FAILED/PROVIDER_PROTOCOL_ERROR");
  BOOST_TEST(node_col(*this, node_id(*this, p.bad), "error_detail").find("DONE") !=
             std::string::npos);
  BOOST_TEST(observe_all(*this).processed == good_count);
  reconcile_all(*this, p);
  BOOST_TEST(completed(*this, p) == good_count);
  BOOST_TEST(snapshot(p.bad).request_state == domain::request_state::failed);
}

// Old code: a malformed prepared action was an exception like any other
// (PREPARE_ERROR); it is the provider breaking the protocol, not an outage.
BOOST_FIXTURE_TEST_CASE(prepare_protocol_error_fails_the_node_and_the_rest_dispatch,
                        test::reference_db_fixture) {
  big_batches(*this);
  auto p = create_population(*this, R"({"answer": {"prepare": {"payload": 7}}})");
  BOOST_TEST(drain_dispatch(*this) == good_count + 1);
  BOOST_TEST(bad_outcome(*this, p) == "FAILED/PROVIDER_PROTOCOL_ERROR");
  auto bad = node_id(*this, p.bad);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE node_id = '" + bad + "'") == 0);
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + bad + "'") == 0);
  BOOST_TEST(node_col(*this, bad, "prepare_errors") == "0"); // not an outage: no retry
  BOOST_TEST(observe_all(*this).processed == good_count);
  reconcile_all(*this, p);
  BOOST_TEST(completed(*this, p) == good_count);
  BOOST_TEST(snapshot(p.bad).request_state == domain::request_state::failed);
}

// Old code: SKIPPED is not a move from SUBMITTING, so the result commit threw
// out of the pass (the loop backed off) and the node sat in SUBMITTING.
BOOST_FIXTURE_TEST_CASE(submit_protocol_error_leaves_the_node_unknown_and_settled,
                        test::reference_db_fixture) {
  big_batches(*this);
  auto p = create_population(*this, R"({"answer": {"submit": {"next_state": "SKIPPED"}}})");
  BOOST_TEST(drain_dispatch(*this) == good_count + 1);
  BOOST_TEST(bad_outcome(*this, p) == "UNKNOWN/PROVIDER_PROTOCOL_ERROR");
  auto bad = node_id(*this, p.bad);
  // The provider accepted it: something may have gone out.
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE node_id = '" + bad + "'") == 1);
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + bad +
                   "' AND kind = 'submit_proof' AND payload->>'error_code' ="
                   " 'PROVIDER_PROTOCOL_ERROR'") == 1);
  BOOST_TEST(observe_all(*this).processed == good_count);
  reconcile_all(*this, p);
  BOOST_TEST(completed(*this, p) == good_count);
  // Settled at once: an operator must look; recovery leaves it alone.
  BOOST_TEST(snapshot(p.bad).request_state == domain::request_state::manual_intervention);
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 0);
  BOOST_TEST(bad_outcome(*this, p) == "UNKNOWN/PROVIDER_PROTOCOL_ERROR");
}

// Old code: the observer's write threw on SKIPPED and the rest of the lane
// (every node behind the bad one) was not observed; the pass threw.
BOOST_FIXTURE_TEST_CASE(observe_protocol_error_leaves_the_node_unknown_and_the_lane_goes_on,
                        test::reference_db_fixture) {
  big_batches(*this);
  auto p = create_population(*this, R"({"answer": {"observe": {"next_state": "SKIPPED"}}})");
  BOOST_TEST(drain_dispatch(*this) == good_count + 1);
  auto r = observe_all(*this);
  BOOST_TEST(r.processed == good_count + 1);
  BOOST_TEST(bad_outcome(*this, p) == "UNKNOWN/PROVIDER_PROTOCOL_ERROR");
  BOOST_TEST(node_col(*this, node_id(*this, p.bad), "observe_count") == "1");
  reconcile_all(*this, p);
  BOOST_TEST(completed(*this, p) == good_count);
  BOOST_TEST(snapshot(p.bad).request_state == domain::request_state::manual_intervention);
  BOOST_TEST(observe_all(*this).processed == 0);
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 0);
}

// Old code: READY from observe became a plain UNKNOWN that recovery would
// then fence and resubmit — on the word of a provider that broke protocol.
BOOST_FIXTURE_TEST_CASE(observe_protocol_error_for_ready_is_settled, test::reference_db_fixture) {
  big_batches(*this);
  auto p = create_population(*this, R"({"answer": {"observe": {"next_state": "READY"}}})");
  BOOST_TEST(drain_dispatch(*this) == good_count + 1);
  BOOST_TEST(observe_all(*this).processed == good_count + 1);
  BOOST_TEST(bad_outcome(*this, p) == "UNKNOWN/PROVIDER_PROTOCOL_ERROR");
  reconcile_all(*this, p);
  BOOST_TEST(completed(*this, p) == good_count);
  BOOST_TEST(snapshot(p.bad).request_state == domain::request_state::manual_intervention);
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 0);
}

// Malformed documents, read by the converters a remote executor's answers
// go through: each is that node's protocol error and nobody else's.
BOOST_FIXTURE_TEST_CASE(observe_protocol_error_for_malformed_documents,
                        test::reference_db_fixture) {
  big_batches(*this);
  std::string deep;
  for (int i = 0; i < 100; ++i)
    deep += "[";
  for (int i = 0; i < 100; ++i)
    deep += "]";
  const std::vector<std::string> answers = {
      R"("{\"next_state\": \"COMPLETED\"")",                                     // truncated
      R"("[]")",                                                                 // not an object
      R"({"next_state": "COMPLETED", "provider_refs": [1, 2]})",                 // refs not object
      R"({"next_state": "COMPLETED", "generated_artifacts": {"a": 1}})",         // not an array
      R"({"next_state": 3})",                                                    // wrong type
      R"("{\"next_state\": \"COMPLETED\", \"next_state\": \"FAILED\"}")",        // repeated member
      R"("{\"next_state\": \"COMPLETED\", \"provider_state\": \"a\\u0000b\"}")", // U+0000
      R"("{\"next_state\": \"COMPLETED\", \"provider_state\": \"\\udc00\"}")",   // lone surrogate
      // too deep (as raw text: a template itself may not nest that deep)
      R"("{\"next_state\": \"COMPLETED\", \"provider_refs\": {\"d\": )" + deep + R"(}}")",
  };
  add_template(sim_template("good", "{}"));
  std::vector<std::string> bad;
  for (size_t i = 0; i < answers.size(); ++i) {
    auto key = "bad" + std::to_string(i);
    add_template(sim_template(key, R"({"answer": {"observe": )" + answers[i] + "}}"));
    bad.push_back(create_and_approve(key));
  }
  population p;
  for (int i = 0; i < good_count; ++i)
    p.good.push_back(create_and_approve("good"));
  const int total = good_count + static_cast<int>(bad.size());
  BOOST_TEST(drain_dispatch(*this) == total);
  BOOST_TEST(observe_all(*this).processed == total);
  for (size_t i = 0; i < bad.size(); ++i) {
    auto n = node_id(*this, bad[i]);
    BOOST_TEST(node_col(*this, n, "node_state") + "/" + node_col(*this, n, "error_code") ==
                   "UNKNOWN/PROVIDER_PROTOCOL_ERROR",
               "answer " << i << ": " << node_col(*this, n, "error_detail"));
    reconcile(bad[i]);
    BOOST_TEST(snapshot(bad[i]).request_state == domain::request_state::manual_intervention,
               "answer " << i);
  }
  for (auto& id : p.good)
    reconcile(id);
  BOOST_TEST(completed(*this, p) == good_count);
}

// Old code: found + SKIPPED threw inside the recovery transaction, which
// rolled back all four arms; the node stayed first by updated_at, so no node
// of its network class was ever recovered again.
BOOST_FIXTURE_TEST_CASE(recover_protocol_error_leaves_the_node_unknown_and_the_arm_goes_on,
                        test::reference_db_fixture) {
  big_batches(*this);
  auto p = create_population(*this, R"({"unknown_at": "submit", "recover_to": "SKIPPED"})",
                             R"({"unknown_at": "submit"})");
  BOOST_TEST(drain_dispatch(*this) == good_count + 1);
  BOOST_TEST(count("SELECT count(*) FROM movement_request_nodes WHERE node_state = 'UNKNOWN'") ==
             good_count + 1);
  workers::recovery_counts counts;
  workers::pass_result r;
  BOOST_REQUIRE_NO_THROW(r = workers::recovery_pass(conn, engine(), &counts));
  BOOST_TEST(r.processed == good_count + 1);
  BOOST_TEST(bad_outcome(*this, p) == "UNKNOWN/PROVIDER_PROTOCOL_ERROR");
  auto bad = node_id(*this, p.bad);
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + bad +
                   "' AND kind = 'recover_proof'"
                   " AND payload->>'error_code' = 'PROVIDER_PROTOCOL_ERROR'"
                   " AND payload->>'next_state' = 'UNKNOWN'") == 1);
  reconcile_all(*this, p);
  BOOST_TEST(completed(*this, p) == good_count);
  BOOST_TEST(snapshot(p.bad).request_state == domain::request_state::manual_intervention);
  // Settled: the next pass leaves it for an operator.
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 0);
}

BOOST_FIXTURE_TEST_CASE(recover_protocol_error_for_a_malformed_document,
                        test::reference_db_fixture) {
  big_batches(*this);
  auto p = create_population(
      *this, R"({"unknown_at": "submit", "answer": {"recover": {"outcome": "maybe"}}})",
      R"({"unknown_at": "submit"})");
  BOOST_TEST(drain_dispatch(*this) == good_count + 1);
  workers::pass_result r;
  BOOST_REQUIRE_NO_THROW(r = workers::recovery_pass(conn, engine()));
  BOOST_TEST(r.processed == good_count + 1);
  BOOST_TEST(bad_outcome(*this, p) == "UNKNOWN/PROVIDER_PROTOCOL_ERROR");
  reconcile_all(*this, p);
  BOOST_TEST(completed(*this, p) == good_count);
  BOOST_TEST(snapshot(p.bad).request_state == domain::request_state::manual_intervention);
}

// A resume gives a protocol-error UNKNOWN back to recovery, like an
// OBSERVATION_TIMEOUT (the operator has looked).
BOOST_FIXTURE_TEST_CASE(resume_hands_a_protocol_error_back_to_recovery,
                        test::reference_db_fixture) {
  add_template(sim_template("bad", R"({"answer": {"observe": {"next_state": "READY"}}})"));
  auto id = create_and_approve("bad");
  BOOST_TEST(drain_dispatch(*this) == 1);
  observe_all(*this);
  reconcile(id);
  BOOST_REQUIRE(snapshot(id).request_state == domain::request_state::manual_intervention);
  auto n = node_id(*this, id);
  {
    pqxx::work tx(*other);
    db::event_batch events(id, settings.callback_max_attempts);
    db::reopen_request(tx, id, domain::request_state::manual_intervention, events);
    BOOST_TEST(db::restart_escalation(tx, id) == 1);
    events.flush(tx);
    tx.commit();
  }
  BOOST_TEST(node_col(*this, n, "error_code") == "RECOVERY_PENDING");
  // The sim has the attempt in its ledger: recovery finds it COMPLETED.
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "COMPLETED");
}

BOOST_AUTO_TEST_SUITE_END()
