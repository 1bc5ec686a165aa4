// The three core passes drive a movement end to end on the real database.
#include <boost/test/unit_test.hpp>

#include "actors/workers/node_dispatcher.hpp"
#include "actors/workers/node_observer.hpp"
#include "domain/json.hpp"
#include "tests/support/db_fixture.hpp"

using namespace mg;

namespace {

const char* chain2 = R"({"template_key": "chain2", "version": 1,
  "nodes": [{"node_key": "a", "action_type": "step", "side_effect": true},
            {"node_key": "b", "action_type": "step", "config": {"ref": "$ref:a.tx_hash"}}],
  "edges": [["a", "b"]]})";

} // namespace

BOOST_AUTO_TEST_SUITE(flow)

BOOST_FIXTURE_TEST_CASE(chain_completes_through_the_passes, test::reference_db_fixture) {
  add_template(chain2);
  auto id = create_and_approve("chain2");
  BOOST_TEST(node_state(id, "a") == "READY");
  BOOST_TEST(node_state(id, "b") == "BLOCKED");

  auto d = workers::dispatch_pass(conn, engine());
  BOOST_TEST(d.processed == 1);
  BOOST_TEST(node_state(id, "a") == "SUBMITTED");
  BOOST_TEST(snapshot(id).request_state == domain::request_state::executing);
  BOOST_TEST(d.wake_observer);

  auto o = workers::observe_pass(conn, engine());
  BOOST_TEST(o.processed == 1);
  BOOST_TEST(node_state(id, "a") == "COMPLETED");
  // The completion and the successor's activation commit together: no
  // reconcile is handed on, and both rows carry the same transaction id.
  BOOST_TEST(o.reconcile.empty());
  BOOST_TEST(o.activated == 1);
  BOOST_TEST(node_state(id, "b") == "READY");
  BOOST_TEST(!snapshot(id).needs_reconcile);
  BOOST_TEST(count("SELECT count(DISTINCT xmin::text) FROM movement_request_nodes"
                   " WHERE request_id = '" +
                   id + "'") == 1);

  workers::dispatch_pass(conn, engine());
  workers::observe_pass(conn, engine());
  BOOST_TEST(snapshot(id).request_state == domain::request_state::completed);
  // b's config $ref resolved against a's provider_refs
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger") == 2);
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE event_type = 'request_completed'") ==
             1);
}

// A submit that answers COMPLETED activates the successor in the result's
// own transaction, as the observer's completion does (the reference's
// dispatch: with wake-ups on, the chain claim takes the successor too).
BOOST_FIXTURE_TEST_CASE(a_completion_at_submit_activates_the_successor_in_its_commit,
                        test::reference_db_fixture) {
  add_template(R"({"template_key": "done_at_submit", "version": 1,
    "nodes": [{"node_key": "a", "action_type": "step", "config": {"sim": {"submit_to": "COMPLETED"}}},
              {"node_key": "b", "action_type": "step"}],
    "edges": [["a", "b"]]})");
  auto id = create_and_approve("done_at_submit");
  auto d = workers::dispatch_pass(conn, engine());
  BOOST_TEST(d.processed == 1);
  BOOST_TEST(node_state(id, "a") == "COMPLETED");
  BOOST_TEST(node_state(id, "b") == "READY");
  BOOST_TEST(d.reconcile.empty());
  BOOST_TEST(d.activated == 1);
  BOOST_TEST(!snapshot(id).needs_reconcile);
  BOOST_TEST(count("SELECT count(DISTINCT xmin::text) FROM movement_request_nodes"
                   " WHERE request_id = '" +
                   id + "'") == 1);
}

namespace {

const char* fan_with_failing_leg = R"({"template_key": "fan_fail", "version": 1,
  "nodes": [{"node_key": "fund", "action_type": "cex_withdrawal", "side_effect": true},
            {"node_key": "left", "action_type": "chain_transfer", "side_effect": true,
             "config": {"sim": {"fail_at": "observe"}}},
            {"node_key": "right", "action_type": "chain_transfer", "side_effect": true,
             "config": {"sim": {"polls_until_done": 2, "retry_after_seconds": 0}}},
            {"node_key": "join", "action_type": "step"}],
  "edges": [["fund", "left"], ["fund", "right"], ["left", "join"], ["right", "join"]]})";

const char* manual_mid_dag = R"({"template_key": "manual_mid", "version": 1,
  "nodes": [{"node_key": "a", "action_type": "step"},
            {"node_key": "sign_off", "action_type": "manual_sign_off"},
            {"node_key": "c", "action_type": "step"}],
  "edges": [["a", "sign_off"], ["sign_off", "c"]]})";

/// Runs dispatch, observe and reconcile passes until nothing moves.
void drive(test::db_fixture& f, const std::string& id) {
  for (int i = 0; i < 20; ++i) {
    int moved = workers::dispatch_pass(f.conn, f.engine()).processed;
    moved += workers::observe_pass(f.conn, f.engine()).processed;
    moved += f.reconcile(id).changed;
    if (!moved)
      return;
  }
}

} // namespace

BOOST_FIXTURE_TEST_CASE(failed_branch_waits_for_the_sibling_in_flight_then_gives_the_verdict,
                        test::reference_db_fixture) {
  add_template(fan_with_failing_leg);
  auto id = create_and_approve("fan_fail");
  workers::dispatch_pass(conn, engine());
  workers::observe_pass(conn, engine());
  reconcile(id); // fund completed: left and right READY
  workers::dispatch_pass(conn, engine());
  workers::dispatch_pass(conn, engine()); // both legs submitted
  workers::observe_pass(conn, engine());  // left FAILED, right OBSERVING (1 of 2 polls)
  reconcile(id);
  BOOST_TEST(node_state(id, "left") == "FAILED");
  BOOST_TEST(node_state(id, "right") == "OBSERVING");
  auto s = snapshot(id);
  BOOST_TEST(s.request_state == domain::request_state::executing); // settle before verdict
  BOOST_TEST(s.dispatch_paused);
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE request_id = '" + id +
                   "' AND event_type = 'request_attention'") == 1); // at once, rule 2 would apply
  drive(*this, id); // the observer keeps following `right` to its end
  BOOST_TEST(node_state(id, "right") == "COMPLETED");
  BOOST_TEST(node_state(id, "join") == "BLOCKED"); // the gate stays shut
  BOOST_TEST(snapshot(id).request_state == domain::request_state::manual_intervention);
}

BOOST_FIXTURE_TEST_CASE(manual_node_mid_dag_parks_the_request, test::db_fixture) {
  add_template(manual_mid_dag);
  auto id = create_and_approve("manual_mid");
  drive(*this, id);
  BOOST_TEST(node_state(id, "a") == "COMPLETED");
  BOOST_TEST(node_state(id, "sign_off") == "READY");
  BOOST_TEST(snapshot(id).request_state == domain::request_state::waiting_manual_action);
  // The dispatcher never claims a manual_* node.
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 0);
  BOOST_TEST(node_state(id, "sign_off") == "READY");
  // An operator completes it (the API will do exactly this): the request
  // goes back to work and finishes.
  exec("UPDATE movement_request_nodes SET node_state = 'COMPLETED' WHERE node_key = 'sign_off'");
  exec("UPDATE movement_requests SET needs_reconcile = true WHERE id = '" + id + "'");
  reconcile(id);
  BOOST_TEST(snapshot(id).request_state == domain::request_state::executing);
  drive(*this, id);
  BOOST_TEST(snapshot(id).request_state == domain::request_state::completed);
}

// ExecutionContext as the reference builds it: node_config after $ref
// resolution (input and predecessor refs, types kept), provider_context the
// flat merge of the COMPLETED direct predecessors' provider_refs only, and
// their artifacts as prior_artifacts. The sim signs over these.
BOOST_FIXTURE_TEST_CASE(execution_context_resolves_refs_and_merges_direct_predecessors,
                        test::db_fixture) {
  add_template(R"({"template_key": "ctx", "version": 1,
    "nodes": [{"node_key": "a", "action_type": "step",
               "config": {"sim": {"provider_refs": {"amount_out": 42, "only_a": "x"}}}},
              {"node_key": "b", "action_type": "step",
               "config": {"sim": {"provider_refs": {"only_b": "y"}}}},
              {"node_key": "c", "action_type": "step",
               "config": {"venue": "$ref:input.venue", "got": "$ref:a.amount_out",
                          "keep": {"nested": "$ref:not.resolved"}}}],
    "edges": [["a", "b"], ["b", "c"]]})");
  auto id = create_and_approve("ctx", R"({"venue": "kraken"})");
  for (int i = 0; i < 3; ++i) {
    workers::dispatch_pass(conn, engine());
    workers::observe_pass(conn, engine());
    reconcile(id);
  }
  BOOST_REQUIRE(snapshot(id).request_state == domain::request_state::completed);
  auto payload = scalar("SELECT a.payload->>'payload' FROM node_artifacts a"
                        " JOIN movement_request_nodes n ON n.id = a.node_id"
                        " WHERE n.node_key = 'c' AND a.kind = 'prepared_action'");
  auto doc = json::parse_trusted(payload, "payload");
  auto& cfg = doc["node_config"];
  BOOST_TEST(std::string(cfg["venue"].GetString()) == "kraken");
  BOOST_TEST(cfg["got"].IsInt()); // the JSON type is kept
  BOOST_TEST(cfg["got"].GetInt() == 42);
  BOOST_TEST(std::string(cfg["keep"]["nested"].GetString()) ==
             "$ref:not.resolved"); // top level only
  auto& pc = doc["provider_context"];
  BOOST_TEST(pc.HasMember("only_b"));  // direct predecessor b
  BOOST_TEST(!pc.HasMember("only_a")); // a is not a direct predecessor of c
  BOOST_TEST(doc["prior_artifact_count"].GetInt() > 0);
}

BOOST_AUTO_TEST_SUITE_END()
