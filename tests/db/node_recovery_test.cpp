// node_recovery on the real database: SUBMITTING past grace (fenced or
// found), UNKNOWN within and past the escalation window, settled UNKNOWNs,
// the EXECUTING filter, the four arms and still-unknown answers.
#include <boost/test/unit_test.hpp>

#include <string>
#include <utility>

#include "actors/workers/node_dispatcher.hpp"
#include "actors/workers/node_observer.hpp"
#include "actors/workers/node_recovery.hpp"
#include "actors/workers/reconcile_sweep.hpp"
#include "persistence/db.hpp"
#include "persistence/node_store.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"
#include "tests/support/hooked_sim.hpp"

using namespace mg;
using namespace mg::test;

namespace {

/// The state a dispatcher that died between its SUBMITTING commit and the
/// result commit leaves behind (attempt 1), claimed `seconds_ago`.
void make_submitting(test::db_fixture& f, const std::string& request_id, const std::string& node,
                     int seconds_ago) {
  f.exec("UPDATE movement_requests SET request_state = 'EXECUTING' WHERE id = '" + request_id +
         "'");
  auto ago = "now() - interval '" + std::to_string(seconds_ago) + " seconds'";
  f.exec("UPDATE movement_request_nodes SET node_state = 'SUBMITTING', attempt_no = 1,"
         " idempotency_key = id || ':1', claim_token = gen_random_uuid(), claimed_by = 'dead-node',"
         " started_at = " +
         ago + ", claimed_at = " + ago + ", updated_at = " + ago + ", ever_submitted = true" +
         " WHERE id = '" + node + "'");
}

/// An UNKNOWN attempt 1, UNKNOWN for `seconds_ago`.
void make_unknown(test::db_fixture& f, const std::string& request_id, const std::string& node,
                  int seconds_ago, const std::string& error_code = "") {
  f.exec("UPDATE movement_requests SET request_state = 'EXECUTING', dispatch_paused = true"
         " WHERE id = '" +
         request_id + "'");
  auto ago = "now() - interval '" + std::to_string(seconds_ago) + " seconds'";
  f.exec("UPDATE movement_request_nodes SET node_state = 'UNKNOWN', attempt_no = 1,"
         " idempotency_key = id || ':1', claim_token = gen_random_uuid(), started_at = " +
         ago + ", claimed_at = " + ago + ", unknown_since = " + ago + ", updated_at = " + ago +
         ", error_code = " + (error_code.empty() ? "NULL" : "'" + error_code + "'") +
         ", ever_submitted = true WHERE id = '" + node + "'");
}

/// A one-node request whose dispatcher died 60 s ago between its
/// SUBMITTING commit and its result (grace 2 s); returns {request, node}.
std::pair<std::string, std::string> stranded_submitting(test::db_fixture& f) {
  f.settings.node_submitting_grace_seconds = 2;
  f.settings.executor_timeout_seconds = 1;
  f.apply_settings();
  f.add_template(one_node("solo"));
  auto id = f.create_and_approve("solo");
  auto n = node_id(f, id);
  make_submitting(f, id, n, 60);
  return {id, n};
}

/// Records attempt 1 of `node` as accepted, the way the sim's submit does.
void accept_in_ledger(test::db_fixture& f, const std::string& node) {
  f.exec("INSERT INTO sim_ledger (idempotency_key, node_id, attempt_no, action_type)"
         " SELECT id || ':1', id, 1, action_type FROM movement_request_nodes WHERE id = '" +
         node + "'");
}

} // namespace

BOOST_AUTO_TEST_SUITE(node_recovery)

BOOST_FIXTURE_TEST_CASE(submitting_past_grace_without_ledger_row_is_fenced,
                        test::reference_db_fixture) {
  auto [id, n] = stranded_submitting(*this);

  workers::recovery_counts counts;
  auto r = workers::recovery_pass(conn, engine(), &counts);
  BOOST_TEST(r.processed == 1);
  BOOST_TEST(counts.fenced == 1);
  BOOST_TEST(counts.found == 0);
  BOOST_TEST(node_col(*this, n, "node_state") == "READY");
  BOOST_TEST(node_col(*this, n, "claim_token") == "");
  BOOST_TEST(node_col(*this, n, "attempt_no") == "1");
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE idempotency_key = '" + n +
                   ":1' AND fenced") == 1);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE NOT fenced") == 0);
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + n +
                   "' AND kind = 'recover_proof' AND payload->>'outcome' = 'fenced'") == 1);

  // the next dispatch is attempt 2
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "SUBMITTED");
  BOOST_TEST(node_col(*this, n, "attempt_no") == "2");
  BOOST_TEST(node_col(*this, n, "idempotency_key") == n + ":2");
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE idempotency_key = '" + n +
                   ":2' AND NOT fenced AND attempt_no = 2") == 1);

  // the dead dispatcher's late submit with the attempt-1 key is refused
  domain::execution_context ctx;
  ctx.request_id = id;
  ctx.request_node_id = n;
  ctx.node_key = "a";
  ctx.action_type = "chain_transfer";
  ctx.attempt_no = 1;
  ctx.idempotency_key = n + ":1";
  domain::prepared_action action;
  action.action_type = "chain_transfer";
  action.payload = "{}";
  auto* sim = engine().providers.find_executor("sim");
  BOOST_REQUIRE(sim);
  auto late = sim->submit(ctx, action, nullptr);
  BOOST_TEST(late.error_code == domain::fenced_error_code);
  BOOST_TEST((late.next_state == domain::node_state::failed));
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE idempotency_key = '" + n +
                   ":1' AND NOT fenced") == 0);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE node_id = '" + n + "'") == 2);
}

// SPEC §1: recovery ends its claim before the executor is called, so a
// slow venue never holds a lock a writer or a claim needs; the result is
// then written, re-checked against the claim, with its request's reconcile.
BOOST_FIXTURE_TEST_CASE(recovery_holds_no_lock_while_the_executor_answers,
                        test::reference_db_fixture) {
  auto [id, n] = stranded_submitting(*this);
  accept_in_ledger(*this, n);
  bool request_free = false, node_free = false;
  hook_sim(ctx->providers)->before_recover = [&, id = id, n = n] {
    request_free = lock_is_free(url, "SELECT 1 FROM movement_requests WHERE id = '" + id +
                                         "' FOR UPDATE NOWAIT");
    node_free = lock_is_free(url, "SELECT 1 FROM movement_request_nodes WHERE id = '" + n +
                                      "' FOR UPDATE NOWAIT");
  };
  workers::recovery_counts counts;
  BOOST_TEST(workers::recovery_pass(conn, engine(), &counts).processed == 1);
  BOOST_TEST(request_free);
  BOOST_TEST(node_free);
  BOOST_TEST(counts.found == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "COMPLETED");
  BOOST_TEST(snapshot(id).request_state == domain::request_state::completed);
}

// A node that moved on while recovery asked the venue (here an operator
// failed it) keeps its new state: the late result is dropped, not written.
BOOST_FIXTURE_TEST_CASE(a_recovery_result_for_a_node_that_moved_on_is_dropped,
                        test::reference_db_fixture) {
  auto [id, n] = stranded_submitting(*this);
  accept_in_ledger(*this, n);
  hook_sim(ctx->providers)->before_recover = [&, n = n] {
    exec("UPDATE movement_request_nodes SET node_state = 'FAILED', error_code = 'OPERATOR'"
         " WHERE id = '" +
         n + "'");
  };
  auto r = workers::recovery_pass(conn, engine());
  BOOST_TEST(r.processed == 1);
  BOOST_TEST(r.stale == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "FAILED");
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + n +
                   "' AND kind = 'recover_proof'") == 0);
}

BOOST_FIXTURE_TEST_CASE(submitting_past_grace_with_ledger_row_is_found,
                        test::reference_db_fixture) {
  auto [id, n] = stranded_submitting(*this);
  accept_in_ledger(*this, n);
  auto token_before = node_col(*this, n, "claim_token");
  BOOST_REQUIRE(!token_before.empty());

  // what the dead dispatcher read before its submit
  db::claimed_node stale;
  {
    pqxx::work tx(*other);
    stale = db::load_node(tx, n).value();
  }

  workers::recovery_counts counts;
  auto r = workers::recovery_pass(conn, engine(), &counts);
  BOOST_TEST(r.processed == 1);
  BOOST_TEST(counts.found == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "COMPLETED");
  auto token_after = node_col(*this, n, "claim_token");
  BOOST_TEST(!token_after.empty());
  BOOST_TEST(token_after != token_before);
  BOOST_TEST(node_col(*this, n, "attempt_no") == "1");
  BOOST_TEST(node_col(*this, n, "provider_ref_id") == "sim-" + n + ":1");
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE node_id = '" + n + "'") == 1);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE fenced") == 0);
  // Reconciled in the transaction that wrote the result: nothing flagged.
  BOOST_TEST(request_col(*this, id, "needs_reconcile") == "f");

  // the dead dispatcher's result, arriving late, changes nothing
  {
    pqxx::work tx(*other);
    db::node_update u;
    u.next_state = domain::node_state::submitted;
    db::event_batch events(id, settings.callback_max_attempts);
    BOOST_CHECK_THROW(db::apply_node_update(tx, stale, u, events), db::stale_write);
    tx.abort();
  }
  BOOST_TEST(node_col(*this, n, "node_state") == "COMPLETED");

  // no second submit
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 0);
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 0);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE node_id = '" + n + "'") == 1);
  reconcile(id);
  BOOST_TEST(snapshot(id).request_state == domain::request_state::completed);
}

BOOST_FIXTURE_TEST_CASE(submitting_younger_than_grace_is_left_alone, test::reference_db_fixture) {
  settings.node_submitting_grace_seconds = 60;
  apply_settings();
  add_template(one_node("solo"));
  auto id = create_and_approve("solo");
  auto n = node_id(*this, id);
  make_submitting(*this, id, n, 5);
  auto token = node_col(*this, n, "claim_token");

  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 0);
  BOOST_TEST(node_col(*this, n, "node_state") == "SUBMITTING");
  BOOST_TEST(node_col(*this, n, "claim_token") == token);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger") == 0);

  // Control: past the grace it is recovered.
  exec("UPDATE movement_request_nodes SET claimed_at = now() - interval '61 seconds'"
       " WHERE id = '" +
       n + "'");
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "READY");
}

BOOST_FIXTURE_TEST_CASE(unknown_within_window_recovered_then_escalated,
                        test::reference_db_fixture) {
  add_template(one_node("unk", "chain_transfer", R"("config": {"sim": {"unknown_at": "submit"}})"));
  auto fresh = create_and_approve("unk");
  auto old = create_and_approve("unk");
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  auto nf = node_id(*this, fresh), no = node_id(*this, old);
  BOOST_REQUIRE(node_col(*this, nf, "node_state") == "UNKNOWN");
  BOOST_REQUIRE(node_col(*this, no, "node_state") == "UNKNOWN");
  reconcile(fresh);
  reconcile(old);
  BOOST_TEST(snapshot(old).request_state ==
             domain::request_state::executing); // in flight while recoverable
  BOOST_TEST(!snapshot(old).needs_reconcile);

  // `old` went UNKNOWN longer ago than MG_UNKNOWN_ESCALATE_SECONDS (900)
  BOOST_REQUIRE(settings.unknown_escalate_seconds == 900);
  exec("UPDATE movement_request_nodes SET unknown_since = now() - interval '901 seconds'"
       " WHERE id = '" +
       no + "'");

  workers::recovery_counts counts;
  BOOST_TEST(workers::recovery_pass(conn, engine(), &counts).processed == 1);
  BOOST_TEST(counts.found == 1);
  BOOST_TEST(node_col(*this, nf, "node_state") == "COMPLETED");
  BOOST_TEST(node_col(*this, nf, "unknown_since") == "");
  BOOST_TEST(node_col(*this, no, "node_state") == "UNKNOWN");

  auto attention_before = count("SELECT count(*) FROM movement_events WHERE request_id = '" + old +
                                "' AND event_type = 'request_attention'");
  // `fresh` was flagged by recovery; no movement actor runs here, so let
  // the sweep's grace pass.
  exec("UPDATE movement_requests SET reconcile_requested_at = now() - interval '2 seconds'");
  workers::reconcile_sweep_pass(conn, engine());
  BOOST_TEST(snapshot(old).request_state == domain::request_state::manual_intervention);
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE request_id = '" + old +
                   "' AND event_type = 'request_attention'") == attention_before + 1);
  BOOST_TEST(snapshot(fresh).request_state == domain::request_state::completed);
  BOOST_TEST(node_col(*this, no, "node_state") == "UNKNOWN");
}

BOOST_FIXTURE_TEST_CASE(observation_timeout_is_never_recovered, test::reference_db_fixture) {
  add_template(one_node("solo"));
  auto id = create_and_approve("solo");
  auto n = node_id(*this, id);
  make_unknown(*this, id, n, 0, "OBSERVATION_TIMEOUT");
  accept_in_ledger(*this, n);

  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 0);
  BOOST_TEST(node_col(*this, n, "node_state") == "UNKNOWN");
  BOOST_TEST(node_col(*this, n, "error_code") == "OBSERVATION_TIMEOUT");

  // Control: any other UNKNOWN with the same ledger row is recovered.
  exec("UPDATE movement_request_nodes SET error_code = 'SUBMIT_ERROR' WHERE id = '" + n + "'");
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "COMPLETED");
}

BOOST_FIXTURE_TEST_CASE(requests_not_executing_are_not_swept, test::reference_db_fixture) {
  add_template(one_node("solo"));
  auto id = create_and_approve("solo");
  auto n = node_id(*this, id);
  make_unknown(*this, id, n, 0);
  accept_in_ledger(*this, n);
  exec("UPDATE movement_requests SET request_state = 'MANUAL_INTERVENTION' WHERE id = '" + id +
       "'");

  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 0);
  BOOST_TEST(node_col(*this, n, "node_state") == "UNKNOWN");

  // Control: resumed to EXECUTING it is recovered.
  exec("UPDATE movement_requests SET request_state = 'EXECUTING' WHERE id = '" + id + "'");
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "COMPLETED");
}

BOOST_FIXTURE_TEST_CASE(four_arms_split_the_batch, test::reference_db_fixture) {
  BOOST_TEST(db::recovery_lane("ccip_send") == 0);
  BOOST_TEST(db::recovery_lane("ccip_delivery") == 0);
  BOOST_TEST(db::recovery_lane("stargate_swap") == 1);
  BOOST_TEST(db::recovery_lane("cex_withdrawal") == 2);
  BOOST_TEST(db::recovery_lane("cex_withdrawal_status") == 2);
  BOOST_TEST(db::recovery_lane("chain_transfer") == 3);

  add_template(R"({"template_key": "arms", "version": 1, "nodes": [
    {"node_key": "c1", "action_type": "ccip_send", "executor_key": "sim"},
    {"node_key": "c2", "action_type": "ccip_send", "executor_key": "sim"},
    {"node_key": "c3", "action_type": "ccip_send", "executor_key": "sim"},
    {"node_key": "t1", "action_type": "chain_transfer", "executor_key": "sim"},
    {"node_key": "t2", "action_type": "chain_transfer", "executor_key": "sim"},
    {"node_key": "t3", "action_type": "chain_transfer", "executor_key": "sim"}]})");
  auto id = create_and_approve("arms");
  for (auto key : {"c1", "c2", "c3", "t1", "t2", "t3"})
    make_unknown(*this, id, node_id(*this, id, key), 0);
  auto unknown_of = [&](const std::string& type) {
    return count("SELECT count(*) FROM movement_request_nodes WHERE request_id = '" + id +
                 "' AND node_state = 'UNKNOWN' AND action_type = '" + type + "'");
  };

  // batch 4: one per arm, two arms have work
  settings.node_recovery_batch_size = 4;
  apply_settings();
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 2);
  BOOST_TEST(unknown_of("ccip_send") == 2);
  BOOST_TEST(unknown_of("chain_transfer") == 2);

  // batch 8: two per arm
  settings.node_recovery_batch_size = 8;
  apply_settings();
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 4);
  BOOST_TEST(unknown_of("ccip_send") == 0);
  BOOST_TEST(unknown_of("chain_transfer") == 0);
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 0);
}

BOOST_FIXTURE_TEST_CASE(recover_answering_submitted_goes_back_to_the_observer,
                        test::reference_db_fixture) {
  settings.node_submitting_grace_seconds = 2;
  apply_settings();
  add_template(
      one_node("r_sub", "chain_transfer", R"("config": {"sim": {"recover_to": "SUBMITTED"}})"));
  auto id = create_and_approve("r_sub");
  auto n = node_id(*this, id);
  make_submitting(*this, id, n, 60);
  accept_in_ledger(*this, n);
  workers::recovery_counts counts;
  auto r = workers::recovery_pass(conn, engine(), &counts);
  BOOST_TEST(r.processed == 1);
  BOOST_TEST(counts.found == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "SUBMITTED");
  BOOST_TEST(node_col(*this, n, "next_observe_at <= clock_timestamp()") == "t"); // due at once
  BOOST_TEST(node_col(*this, n, "attempt_no") == "1");
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + n +
                   "' AND kind = 'recover_proof' AND payload->>'next_state' = 'SUBMITTED'") == 1);
  // The observer takes it from there; no second submit.
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "COMPLETED");
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE node_id = '" + n + "'") == 1);
}

BOOST_FIXTURE_TEST_CASE(recover_answering_failed_fails_the_node, test::reference_db_fixture) {
  add_template(
      one_node("r_fail", "chain_transfer", R"("config": {"sim": {"recover_to": "FAILED"}})"));
  auto id = create_and_approve("r_fail");
  auto n = node_id(*this, id);
  make_unknown(*this, id, n, 30);
  accept_in_ledger(*this, n);
  workers::recovery_counts counts;
  BOOST_TEST(workers::recovery_pass(conn, engine(), &counts).processed == 1);
  BOOST_TEST(counts.found == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "FAILED");
  BOOST_TEST(node_col(*this, n, "unknown_since").empty());
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE fenced") == 0);
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 0);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 0); // no new attempt
  reconcile(id);
  BOOST_TEST(snapshot(id).request_state == domain::request_state::failed);
}

BOOST_FIXTURE_TEST_CASE(each_arm_takes_its_longest_idle_node_first, test::reference_db_fixture) {
  add_template(R"({"template_key": "idle", "version": 1, "nodes": [
    {"node_key": "t1", "action_type": "chain_transfer", "executor_key": "sim"},
    {"node_key": "t2", "action_type": "chain_transfer", "executor_key": "sim"},
    {"node_key": "t3", "action_type": "chain_transfer", "executor_key": "sim"}]})");
  auto id = create_and_approve("idle");
  // updated_at against plan order: t2 idle longest, then t3, then t1.
  make_unknown(*this, id, node_id(*this, id, "t1"), 10);
  make_unknown(*this, id, node_id(*this, id, "t2"), 30);
  make_unknown(*this, id, node_id(*this, id, "t3"), 20);
  settings.node_recovery_batch_size = 4; // one per arm
  apply_settings();
  for (auto expected : {"t2", "t3", "t1"}) {
    BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 1);
    BOOST_TEST(node_state(id, expected) != "UNKNOWN", expected); // the others wait
  }
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 0);
}

BOOST_FIXTURE_TEST_CASE(stargate_and_cex_arms_get_their_share, test::reference_db_fixture) {
  add_template(R"({"template_key": "sg_cex", "version": 1, "nodes": [
    {"node_key": "s1", "action_type": "stargate_swap", "executor_key": "sim"},
    {"node_key": "s2", "action_type": "stargate_swap", "executor_key": "sim"},
    {"node_key": "x1", "action_type": "cex_withdrawal", "executor_key": "sim"},
    {"node_key": "x2", "action_type": "cex_withdrawal", "executor_key": "sim"},
    {"node_key": "o1", "action_type": "chain_transfer", "executor_key": "sim"},
    {"node_key": "o2", "action_type": "chain_transfer", "executor_key": "sim"},
    {"node_key": "o3", "action_type": "chain_transfer", "executor_key": "sim"}]})");
  auto id = create_and_approve("sg_cex");
  // The "other" nodes are the longest idle: without the arms they would
  // take the whole batch.
  for (auto key : {"s1", "s2", "x1", "x2"})
    make_unknown(*this, id, node_id(*this, id, key), 10);
  for (auto key : {"o1", "o2", "o3"})
    make_unknown(*this, id, node_id(*this, id, key), 60);
  auto unknown_of = [&](const std::string& type) {
    return count("SELECT count(*) FROM movement_request_nodes WHERE request_id = '" + id +
                 "' AND node_state = 'UNKNOWN' AND action_type = '" + type + "'");
  };
  settings.node_recovery_batch_size = 4; // one per arm
  apply_settings();
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 3); // the ccip arm is empty
  BOOST_TEST(unknown_of("stargate_swap") == 1);
  BOOST_TEST(unknown_of("cex_withdrawal") == 1);
  BOOST_TEST(unknown_of("chain_transfer") == 2);
  BOOST_TEST(workers::recovery_pass(conn, engine()).processed == 3);
  BOOST_TEST(unknown_of("stargate_swap") == 0);
  BOOST_TEST(unknown_of("cex_withdrawal") == 0);
  BOOST_TEST(unknown_of("chain_transfer") == 1);
}

BOOST_FIXTURE_TEST_CASE(still_unknown_keeps_unknown_and_bumps_updated_at,
                        test::reference_db_fixture) {
  add_template(one_node("solo"));
  auto id = create_and_approve("solo");
  auto n = node_id(*this, id);
  make_unknown(*this, id, n, 60);
  exec("UPDATE movement_request_nodes SET executor_key = 'missing',"
       " updated_at = now() - interval '1 hour' WHERE id = '" +
       n + "'");
  auto since = node_col(*this, n, "unknown_since");
  auto token = node_col(*this, n, "claim_token");

  workers::recovery_counts counts;
  BOOST_TEST(workers::recovery_pass(conn, engine(), &counts).processed == 1);
  BOOST_TEST(counts.still_unknown == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "UNKNOWN");
  BOOST_TEST(node_col(*this, n, "error_code") == "RECOVERY_PENDING");
  BOOST_TEST(node_col(*this, n, "updated_at > now() - interval '1 minute'") == "t");
  BOOST_TEST(node_col(*this, n, "unknown_since") == since);
  BOOST_TEST(node_col(*this, n, "claim_token") != token);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger") == 0);
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + n +
                   "' AND kind = 'recover_proof' AND payload->>'outcome' = 'still_unknown'") == 1);
}

BOOST_AUTO_TEST_SUITE_END()
