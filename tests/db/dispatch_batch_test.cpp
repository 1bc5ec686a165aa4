// node_dispatcher's batched steps (SPEC §1): one claim transaction for the
// READY nodes of several requests whose executor claims in batch, their
// results in one transaction, each re-checked under the lock, and the inline
// first observation.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
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

/// The fixture's real sim executor with a hook that runs when a batch's
/// submits begin (after the claim committed, before any ledger write).
struct hooked_sim : domain::executor {
  std::shared_ptr<domain::executor> sim;
  std::function<void()> before_submits;
  explicit hooked_sim(std::shared_ptr<domain::executor> s) : sim(std::move(s)) {}
  std::optional<domain::step_result> preflight(const domain::execution_context& c) override {
    return sim->preflight(c);
  }
  std::optional<domain::prepared_action> prepare(const domain::execution_context& c) override {
    return sim->prepare(c);
  }
  domain::step_result submit(const domain::execution_context& c, const domain::prepared_action& a,
                             const domain::sign_result* s) override {
    return sim->submit(c, a, s);
  }
  std::vector<domain::step_result>
  submit_many(const std::vector<domain::submit_call>& calls) override {
    before_submits();
    return sim->submit_many(calls);
  }
  domain::step_result observe(const domain::execution_context& c) override {
    return sim->observe(c);
  }
  domain::recover_result recover(const domain::execution_context& c) override {
    return sim->recover(c);
  }
  domain::health_result health() override { return sim->health(); }
  bool claims_in_batch(const domain::execution_context& c) const override {
    return sim->claims_in_batch(c);
  }
};

/// Puts a hooked_sim in place of the fixture's "sim" executor.
std::shared_ptr<hooked_sim> hook_sim(db_fixture& f, std::function<void()> before_submits) {
  auto hooked = std::make_shared<hooked_sim>(f.ctx->providers.executors.at("sim"));
  hooked->before_submits = std::move(before_submits);
  f.ctx->providers.executors["sim"] = hooked;
  return hooked;
}

} // namespace

BOOST_AUTO_TEST_SUITE(dispatch_batch)

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

BOOST_AUTO_TEST_SUITE_END()
