// node_dispatcher's batched steps (SPEC §1): one claim transaction for the
// READY nodes of several requests whose executor claims in batch, their
// results in one transaction, each re-checked under the lock, and the inline
// first observation.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "actors/workers/node_dispatcher.hpp"
#include "actors/workers/node_observer.hpp"
#include "actors/workers/node_recovery.hpp"
#include "config/metrics.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"
#include "tests/support/hooked_sim.hpp"

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

/// A three-step chain of zero-latency sim nodes: a → b → c.
const char* chain3 = R"({"template_key": "chain3", "version": 1, "nodes": [
    {"node_key": "a", "action_type": "step", "executor_key": "sim"},
    {"node_key": "b", "action_type": "step", "executor_key": "sim"},
    {"node_key": "c", "action_type": "step", "executor_key": "sim"}],
  "edges": [["a", "b"], ["b", "c"]]})";

/// What unwinds a pass the way SIGKILL ends a process: no executor answer,
/// no catch in the engine.
struct process_killed {};

/// Puts a hooked_sim in place of the fixture's "sim" executor.
std::shared_ptr<test::hooked_sim> hook_sim(db_fixture& f, std::function<void()> before_submits) {
  auto hooked = test::hook_sim(f.ctx->providers);
  hooked->before_submits = std::move(before_submits);
  return hooked;
}

} // namespace

BOOST_AUTO_TEST_SUITE(node_dispatcher_batch)

BOOST_FIXTURE_TEST_CASE(one_pass_claims_all_before_the_first_submit_and_settles_them, db_fixture) {
  // When the submits begin, every node of the batch is SUBMITTING already
  // (one claim commit, write-ahead) and nothing is in the ledger yet.
  add_template(one_node("solo"));
  auto requests = approved(*this, "solo", 5);
  long submitting_at_first_submit = -1;
  long ledger_at_first_submit = -1;
  hook_sim(*this, [&] {
    submitting_at_first_submit =
        count("SELECT count(*) FROM movement_request_nodes WHERE node_state = 'SUBMITTING'");
    ledger_at_first_submit = count("SELECT count(*) FROM sim_ledger");
  });
  auto r = workers::dispatch_pass(conn, engine());
  BOOST_TEST(submitting_at_first_submit == 5);
  BOOST_TEST(ledger_at_first_submit == 0);
  BOOST_TEST(r.processed == 5);
  BOOST_TEST(r.stale == 0);
  for (auto& id : requests) {
    BOOST_TEST(node_state(id, "a") == "COMPLETED");
    BOOST_TEST(request_col(*this, id, "request_state") == "COMPLETED");
  }
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger") == 5);
}

BOOST_FIXTURE_TEST_CASE(a_batchs_results_are_one_commit_on_metrics, db_fixture) {
  auto& registry = metrics::registry::global();
  // Found by name: the dispatcher registered them with their buckets.
  workers::dispatch_pass(conn, engine());
  auto& sizes = registry.get_histogram("movegate_result_commit_batch_size", "", {});
  auto& seconds = registry.get_histogram("movegate_result_commit_seconds", "", {});
  auto& waiting = registry.get_gauge("movegate_results_awaiting_commit", "");
  add_template(one_node("solo"));
  approved(*this, "solo", 5);
  const auto commits_before = sizes.cumulative().back();
  const double results_before = sizes.sum();
  const auto timed_before = seconds.cumulative().back();
  workers::dispatch_pass(conn, engine());
  BOOST_TEST(sizes.cumulative().back() == commits_before + 1);
  BOOST_TEST(sizes.sum() - results_before == 5.0);
  BOOST_TEST(seconds.cumulative().back() == timed_before + 1);
  BOOST_TEST(waiting.value() == 0.0);
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

BOOST_FIXTURE_TEST_CASE(a_stale_result_is_left_out_alone, db_fixture) {
  // Between the claim and the results, the middle request's claim token
  // moves (as recovery's would): only its result is stale.
  add_template(one_node("solo"));
  auto requests = approved(*this, "solo", 3);
  auto moved = node_id(*this, requests[1]);
  hook_sim(*this, [&] {
    exec("UPDATE movement_request_nodes SET claim_token = gen_random_uuid() WHERE id = '" + moved +
         "'");
  });
  auto r = workers::dispatch_pass(conn, engine());
  BOOST_TEST(r.processed == 3);
  BOOST_TEST(r.stale == 1);
  BOOST_TEST(node_state(requests[0], "a") == "COMPLETED");
  BOOST_TEST(node_state(requests[2], "a") == "COMPLETED");
  BOOST_TEST(node_state(requests[1], "a") == "SUBMITTING");
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + moved +
                   "' AND kind = 'submit_proof'") == 0);
}

BOOST_FIXTURE_TEST_CASE(a_result_is_not_written_over_a_node_that_moved_on_under_its_token,
                        db_fixture) {
  // What a retry meets after a result commit that landed although the
  // connection died during COMMIT: same attempt and token, another state.
  add_template(one_node("solo"));
  auto requests = approved(*this, "solo", 2);
  auto moved = node_id(*this, requests[0]);
  hook_sim(*this, [&] {
    exec("UPDATE movement_request_nodes SET node_state = 'SUBMITTED' WHERE id = '" + moved + "'");
  });
  auto r = workers::dispatch_pass(conn, engine());
  BOOST_TEST(r.stale == 1);
  BOOST_TEST(node_state(requests[0], "a") == "SUBMITTED");
  BOOST_TEST(node_col(*this, moved, "observe_count") == "0");
  BOOST_TEST(node_state(requests[1], "a") == "COMPLETED");
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

BOOST_FIXTURE_TEST_CASE(a_completion_chain_claims_its_successor_write_ahead, db_fixture) {
  // The whole chain runs in one pass: each successor is claimed in the
  // transaction of its predecessor's result, and its SUBMITTING row is
  // committed before its submit.
  add_template(chain3);
  auto id = create_and_approve("chain3");
  std::vector<std::string> seen; // at each submit: SUBMITTING rows / ledger rows
  hook_sim(*this, [&] {
    seen.push_back(
        std::to_string(
            count("SELECT count(*) FROM movement_request_nodes WHERE node_state = 'SUBMITTING'")) +
        "/" + std::to_string(count("SELECT count(*) FROM sim_ledger")));
  });
  auto r = workers::dispatch_pass(conn, engine());
  BOOST_TEST(r.processed == 3);
  BOOST_TEST(seen == (std::vector<std::string>{"1/0", "1/1", "1/2"}));
  for (auto key : {"a", "b", "c"}) {
    BOOST_TEST(node_state(id, key) == "COMPLETED");
    BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE node_id = '" + node_id(*this, id, key) +
                     "' AND NOT fenced") == 1);
  }
  BOOST_TEST(request_col(*this, id, "request_state") == "COMPLETED");
  BOOST_TEST(r.activated == 0); // claimed at once: no other dispatcher to wake
}

BOOST_FIXTURE_TEST_CASE(a_chain_claimed_node_writes_what_a_fifo_claim_would, db_fixture) {
  add_template(chain3);
  auto chained = create_and_approve("chain3");
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 3);

  settings.wakeups_enabled = false; // the reference: FIFO claims, the observer observes
  apply_settings();
  auto reference = create_and_approve("chain3");
  for (int i = 0; i < 20 && node_state(reference, "c") != "COMPLETED"; ++i) {
    workers::dispatch_pass(conn, engine());
    workers::observe_pass(conn, engine());
    this->reconcile(reference);
  }
  for (auto key : {"b", "c"})
    BOOST_TEST(history(*this, node_id(*this, chained, key)) ==
               history(*this, node_id(*this, reference, key)));
  BOOST_TEST(history(*this, node_id(*this, chained, "b")).find("READY,SUBMITTING,SUBMITTED") !=
             std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(a_chain_claim_leaves_manual_and_waiting_successors_to_the_fifo,
                        db_fixture) {
  add_template(R"({"template_key": "mixed", "version": 1, "nodes": [
    {"node_key": "a", "action_type": "step", "executor_key": "sim"},
    {"node_key": "sign_off", "action_type": "manual_sign_off"},
    {"node_key": "slow", "action_type": "step", "executor_key": "sim",
     "config": {"sim": {"latency_ms": 1}}}],
  "edges": [["a", "sign_off"], ["a", "slow"]]})");
  auto id = create_and_approve("mixed");
  auto r = workers::dispatch_pass(conn, engine());
  BOOST_TEST(r.processed == 1);
  BOOST_TEST(node_state(id, "a") == "COMPLETED");
  BOOST_TEST(node_state(id, "sign_off") == "READY");
  BOOST_TEST(node_state(id, "slow") == "READY");
  BOOST_TEST(r.activated == 2); // left READY: the dispatchers are woken for them
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger") == 1);
  // The FIFO takes the slow one on its own; nobody claims the manual node.
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_state(id, "slow") == "COMPLETED");
  BOOST_TEST(node_state(id, "sign_off") == "READY");
}

BOOST_FIXTURE_TEST_CASE(a_stop_signal_during_a_submit_ends_the_chain_there, db_fixture) {
  // SIGTERM while a's submit runs: a's result still commits, but b is left
  // READY for whoever runs next instead of being claimed by a draining pass.
  add_template(chain3);
  auto id = create_and_approve("chain3");
  std::atomic<bool> stopping{false};
  hook_sim(*this, [&] { stopping = true; });
  auto r = workers::dispatch_pass(conn, engine(), 0, &stopping);
  BOOST_TEST(r.processed == 1);
  BOOST_TEST(node_state(id, "a") == "COMPLETED");
  BOOST_TEST(node_state(id, "b") == "READY");
  BOOST_TEST(r.activated == 1);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger") == 1);
}

BOOST_FIXTURE_TEST_CASE(wakeups_off_never_chain_claims, db_fixture) {
  settings.wakeups_enabled = false;
  apply_settings();
  add_template(chain3);
  auto id = create_and_approve("chain3");
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_state(id, "a") == "SUBMITTED");
  BOOST_TEST(node_state(id, "b") == "BLOCKED");
}

BOOST_FIXTURE_TEST_CASE(a_chain_claim_killed_before_its_submit_is_fenced_by_recovery, db_fixture) {
  // The process dies after the commit that completed a and claimed b, before
  // b's submit: b is SUBMITTING with no ledger record, and recovery fences
  // that attempt, so b is submitted once, by attempt 2.
  add_template(chain3);
  auto id = create_and_approve("chain3");
  int submits = 0;
  hook_sim(*this, [&] {
    if (++submits == 2)
      throw process_killed{};
  });
  BOOST_CHECK_THROW(workers::dispatch_pass(conn, engine()), process_killed);
  auto b = node_id(*this, id, "b");
  BOOST_TEST(node_state(id, "a") == "COMPLETED");
  BOOST_TEST(node_state(id, "b") == "SUBMITTING");
  BOOST_TEST(node_col(*this, b, "attempt_no") == "1");
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE node_id = '" + b + "'") == 0);

  hook_sim(*this, [] {});
  exec("UPDATE movement_request_nodes SET claimed_at = now() - interval '1 hour',"
       " updated_at = now() - interval '1 hour' WHERE id = '" +
       b + "'");
  workers::recovery_counts counts;
  BOOST_TEST(workers::recovery_pass(conn, engine(), &counts).processed == 1);
  BOOST_TEST(counts.fenced == 1);
  BOOST_TEST(node_state(id, "b") == "READY");
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 2); // b, then c chained
  BOOST_TEST(node_state(id, "c") == "COMPLETED");
  BOOST_TEST(node_col(*this, b, "attempt_no") == "2");
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE node_id = '" + b + "' AND NOT fenced") ==
             1);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE idempotency_key = '" + b +
                   ":1' AND fenced") == 1);
}

BOOST_FIXTURE_TEST_CASE(a_batch_writes_each_requests_events_and_outbox_rows_in_order, db_fixture) {
  // The results of a batch share one events write: every request gets its
  // own events in the order they happened, and outbox rows only where it
  // has a callback_url.
  add_template(chain3);
  auto with_callback = create("chain3", "{}", "https://receiver.example/cb");
  auto without = create("chain3");
  approve(with_callback);
  approve(without);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 6);
  auto states = [&](const std::string& id, const std::string& key) {
    return scalar("SELECT string_agg(payload->>'node_state', ',' ORDER BY seq)"
                  " FROM movement_events WHERE event_type = 'node_state_changed'"
                  " AND request_id = '" +
                  id + "' AND node_key = '" + key + "'");
  };
  for (auto& id : {with_callback, without}) {
    BOOST_TEST(states(id, "a") == "READY,SUBMITTING,SUBMITTED,COMPLETED");
    BOOST_TEST(states(id, "c") == "READY,SUBMITTING,SUBMITTED,COMPLETED");
    BOOST_TEST(request_col(*this, id, "request_state") == "COMPLETED");
  }
  BOOST_TEST(count("SELECT count(*) FROM movement_callback_outbox WHERE request_id = '" + without +
                   "'") == 0);
  BOOST_TEST(
      count("SELECT count(*) FROM movement_callback_outbox WHERE request_id = '" + with_callback +
            "'") ==
      count("SELECT count(*) FROM movement_events WHERE request_id = '" + with_callback + "'"));
}

/// Records every update of a node row from here on: (node_key, old state,
/// new state), in order. How many row versions the engine writes is what
/// the chain claim saves.
void record_node_row_versions(db_fixture& f) {
  f.exec("CREATE TABLE node_row_versions (seq bigserial, node_key text, from_state text,"
         " to_state text);"
         "CREATE FUNCTION record_node_row_version() RETURNS trigger LANGUAGE plpgsql AS $$"
         " BEGIN INSERT INTO node_row_versions (node_key, from_state, to_state)"
         " VALUES (NEW.node_key, OLD.node_state, NEW.node_state); RETURN NEW; END $$;"
         "CREATE TRIGGER record_node_row_version AFTER UPDATE ON movement_request_nodes"
         " FOR EACH ROW EXECUTE FUNCTION record_node_row_version();");
}

/// The states a node's row took, in order: "BLOCKED>SUBMITTING,...".
std::string row_versions(db_fixture& f, const std::string& key) {
  return f.scalar("SELECT string_agg(from_state || '>' || to_state, ',' ORDER BY seq)"
                  " FROM node_row_versions WHERE node_key = '" +
                  key + "'");
}

BOOST_FIXTURE_TEST_CASE(a_chain_claimed_successor_goes_from_blocked_to_submitting_in_one_write,
                        db_fixture) {
  // Its READY exists as an event only: the row is written once for the
  // claim, not once for the activation and again for the claim.
  add_template(chain3);
  auto id = create_and_approve("chain3");
  record_node_row_versions(*this);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 3);
  for (auto key : {"b", "c"}) {
    BOOST_TEST(node_state(id, key) == "COMPLETED");
    BOOST_TEST(row_versions(*this, key).rfind("BLOCKED>SUBMITTING,", 0) == 0);
    BOOST_TEST(row_versions(*this, key).find("READY") == std::string::npos);
  }
  BOOST_TEST(history(*this, node_id(*this, id, "b")).find("READY,SUBMITTING,SUBMITTED") !=
             std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(successors_past_the_chain_claims_batch_size_become_ready, db_fixture) {
  settings.node_dispatch_batch_size = 1;
  apply_settings();
  add_template(R"({"template_key": "fork", "version": 1, "nodes": [
    {"node_key": "a", "action_type": "step", "executor_key": "sim"},
    {"node_key": "b", "action_type": "step", "executor_key": "sim"},
    {"node_key": "c", "action_type": "step", "executor_key": "sim"}],
  "edges": [["a", "b"], ["a", "c"]]})");
  auto id = create_and_approve("fork");
  record_node_row_versions(*this);
  auto r = workers::dispatch_pass(conn, engine());
  BOOST_TEST(r.processed == 2); // a, then b chained
  BOOST_TEST(node_state(id, "b") == "COMPLETED");
  BOOST_TEST(node_state(id, "c") == "READY");
  BOOST_TEST(row_versions(*this, "c") == "BLOCKED>READY");
  BOOST_TEST(r.activated == 1);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(request_col(*this, id, "request_state") == "COMPLETED");
}

BOOST_FIXTURE_TEST_CASE(a_chain_claimed_successor_whose_preflight_call_fails_waits_ready,
                        db_fixture) {
  // SPEC §1 preflight/prepare errors, for a node whose claim skipped its
  // READY row: it becomes READY with the error counted and its retry delay.
  add_template(chain3);
  auto id = create_and_approve("chain3");
  auto hooked = hook_sim(*this, [] {});
  hooked->before_preflight = [](const domain::execution_context& c) {
    if (c.node_key == "b")
      throw domain::executor_error("connection refused (preflight)");
  };
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1); // a; b deferred
  auto b = node_id(*this, id, "b");
  BOOST_TEST(node_state(id, "b") == "READY");
  BOOST_TEST(node_col(*this, b, "prepare_errors") == "1");
  BOOST_TEST(node_col(*this, b, "error_code") == "PREFLIGHT_ERROR");
  BOOST_TEST(count("SELECT count(*) FROM movement_request_nodes WHERE id = '" + b +
                   "' AND retry_at > now()") == 1);
  BOOST_TEST(node_state(id, "c") == "BLOCKED");
}

BOOST_FIXTURE_TEST_CASE(a_chain_claimed_successor_that_fails_preflight_fails_from_its_claim,
                        db_fixture) {
  add_template(R"({"template_key": "refused", "version": 1, "nodes": [
    {"node_key": "a", "action_type": "step", "executor_key": "sim"},
    {"node_key": "b", "action_type": "step", "executor_key": "sim",
     "config": {"sim": {"fail_at": "preflight"}}}],
  "edges": [["a", "b"]]})");
  auto id = create_and_approve("refused");
  record_node_row_versions(*this);
  workers::dispatch_pass(conn, engine());
  BOOST_TEST(node_state(id, "b") == "FAILED");
  BOOST_TEST(row_versions(*this, "b") == "BLOCKED>FAILED");
  BOOST_TEST(scalar("SELECT string_agg(payload->>'node_state', ',' ORDER BY seq)"
                    " FROM movement_events WHERE event_type = 'node_state_changed'"
                    " AND node_key = 'b'") == "READY,FAILED");
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE node_id = '" + node_id(*this, id, "b") +
                   "'") == 0);
}

BOOST_AUTO_TEST_SUITE_END()
