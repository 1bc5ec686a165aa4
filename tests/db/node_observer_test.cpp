// node_observer on the real database: the next_observe_at gate, retry hint
// precedence, polls, observation timeouts and the per-node claim.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <string>

#include "actors/system_config.hpp"
#include "actors/workers/node_dispatcher.hpp"
#include "actors/workers/node_observer.hpp"
#include "actors/workers/node_result.hpp"
#include "persistence/db.hpp"
#include "persistence/node_store.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"
#include "tests/support/hooked_sim.hpp"

using namespace mg;
using namespace mg::test;

namespace {

/// Seconds from now until the node's next_observe_at.
double due_in(test::db_fixture& f, const std::string& id) {
  return std::stod(f.scalar("SELECT extract(epoch FROM next_observe_at - clock_timestamp())"
                            " FROM movement_request_nodes WHERE id = '" +
                            id + "'"));
}

void make_due(test::db_fixture& f, const std::string& id) {
  f.exec("UPDATE movement_request_nodes SET next_observe_at = now() - interval '1 second'"
         " WHERE id = '" +
         id + "'");
}

/// Creates, approves and dispatches a one-node request; returns the node id.
std::string submitted(test::db_fixture& f, const std::string& template_key,
                      std::string* request_id = nullptr) {
  auto id = f.create_and_approve(template_key);
  auto r = workers::dispatch_pass(f.conn, f.engine());
  BOOST_REQUIRE(r.processed == 1);
  auto n = node_id(f, id);
  BOOST_REQUIRE(node_col(f, n, "node_state") == "SUBMITTED");
  if (request_id)
    *request_id = id;
  return n;
}

} // namespace

BOOST_AUTO_TEST_SUITE(node_observer)

BOOST_FIXTURE_TEST_CASE(next_observe_at_is_honoured, test::db_fixture) {
  // Wake-ups on (the pass reports the next due time), and an answer that
  // asks for a later look, so the dispatcher does not observe it at once.
  add_template(
      one_node("later", "chain_transfer", R"("config": {"sim": {"retry_after_seconds": 30}})"));
  auto n = submitted(*this, "later");
  exec("UPDATE movement_request_nodes SET next_observe_at = now() + interval '1 hour'"
       " WHERE id = '" +
       n + "'");
  {
    pqxx::work tx(*other);
    BOOST_TEST(db::observe_candidates(tx, "devnet", 10).empty());
    BOOST_TEST(!db::claim_for_observe(tx, n, "devnet").has_value());
    tx.abort();
  }
  auto r = workers::observe_pass(conn, engine());
  BOOST_TEST(r.processed == 0);
  BOOST_TEST(node_col(*this, n, "node_state") == "SUBMITTED");
  BOOST_TEST(node_col(*this, n, "observe_count") == "0");
  // the pass reports when the node becomes due
  BOOST_REQUIRE(r.next_due_in_seconds.has_value());
  BOOST_TEST(std::abs(*r.next_due_in_seconds - 3600) <= 5);

  make_due(*this, n);
  {
    pqxx::work tx(*other);
    BOOST_TEST(db::observe_candidates(tx, "devnet", 10).size() == 1u);
    tx.abort();
  }
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "COMPLETED");
  BOOST_TEST(node_col(*this, n, "observe_count") == "1");
}

BOOST_FIXTURE_TEST_CASE(retry_hint_precedence, test::reference_db_fixture) {
  add_template(one_node("hint7", "chain_transfer",
                        R"("config": {"sim": {"retry_after_seconds": 7, "polls_until_done": 2}})"));
  add_template(
      one_node("cexnull", "cex_withdrawal_status",
               R"("config": {"sim": {"retry_after_seconds": null, "polls_until_done": 2}})"));
  add_template(
      one_node("othernull", "some_unlisted_action",
               R"("config": {"sim": {"retry_after_seconds": null, "polls_until_done": 2}})"));
  add_template(
      one_node("huge", "chain_transfer",
               R"("config": {"sim": {"retry_after_seconds": 10000, "polls_until_done": 2}})"));
  auto h7 = submitted(*this, "hint7");
  // the submit answer carries the hint too
  BOOST_TEST(std::abs(due_in(*this, h7) - 7) <= 1);
  auto cex = submitted(*this, "cexnull");
  BOOST_TEST(std::abs(due_in(*this, cex) - 5) <= 1);
  auto other_type = submitted(*this, "othernull");
  auto huge = submitted(*this, "huge");
  for (auto& n : {h7, cex, other_type, huge})
    make_due(*this, n);

  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 4);
  for (auto& n : {h7, cex, other_type, huge}) {
    BOOST_TEST(node_col(*this, n, "node_state") == "OBSERVING");
    BOOST_TEST(node_col(*this, n, "observe_count") == "1");
  }
  BOOST_TEST(std::abs(due_in(*this, h7) - 7) <= 1);
  BOOST_TEST(std::abs(due_in(*this, cex) - 5) <= 1);
  BOOST_TEST(std::abs(due_in(*this, other_type) - 10) <= 1);
  BOOST_TEST(std::abs(due_in(*this, huge) - 600) <= 1);
  // none of them is due again yet
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 0);
}

BOOST_FIXTURE_TEST_CASE(polls_until_done, test::reference_db_fixture) {
  add_template(
      one_node("polls", "chain_transfer", R"("config": {"sim": {"polls_until_done": 2}})"));
  std::string id;
  auto n = submitted(*this, "polls", &id);
  const char* expected[] = {"OBSERVING", "OBSERVING", "COMPLETED"};
  for (int i = 0; i < 3; ++i) {
    auto r = workers::observe_pass(conn, engine());
    BOOST_TEST(r.processed == 1, "observation " << i);
    BOOST_TEST(node_col(*this, n, "node_state") == expected[i], "observation " << i);
    BOOST_TEST(node_col(*this, n, "observe_count") == std::to_string(i + 1));
    BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + n +
                     "' AND kind = 'observe_proof' AND attempt_no = 1") == i + 1);
    BOOST_TEST(!node_col(*this, n, "last_observed_at").empty());
  }
  BOOST_TEST(node_col(*this, n, "provider_refs->>'sim_polls'") == "2");
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 0);
  reconcile(id);
  BOOST_TEST(snapshot(id).request_state == domain::request_state::completed);
}

BOOST_FIXTURE_TEST_CASE(observe_answering_unknown, test::reference_db_fixture) {
  add_template(one_node("lost", "chain_transfer", R"("side_effect": true,
      "config": {"sim": {"unknown_at": "observe"}})"));
  std::string id;
  auto n = submitted(*this, "lost", &id);
  auto r = workers::observe_pass(conn, engine());
  BOOST_TEST(r.processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "UNKNOWN");
  BOOST_TEST(!node_col(*this, n, "unknown_since").empty());
  BOOST_TEST(node_col(*this, n, "next_observe_at IS NULL") == "t");
  BOOST_TEST(node_col(*this, n, "observe_count") == "1");
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + n +
                   "' AND kind = 'observe_proof' AND payload->>'next_state' = 'UNKNOWN'") == 1);
  // No longer the observer's: recovery owns it now.
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 0);
  reconcile(id);
  BOOST_TEST(snapshot(id).request_state != domain::request_state::completed);
  BOOST_TEST(snapshot(id).request_state !=
             domain::request_state::failed); // UNKNOWN is never a failure
}

BOOST_FIXTURE_TEST_CASE(a_pass_observes_the_ten_oldest_requests_first, test::reference_db_fixture) {
  add_template(one_node("many"));
  std::vector<std::string> requests, nodes;
  for (int i = 0; i < 12; ++i) {
    std::string id;
    nodes.push_back(submitted(*this, "many", &id));
    requests.push_back(id);
  }
  // Request age against creation order: the last created is the oldest.
  for (int i = 0; i < 12; ++i) {
    exec("UPDATE movement_requests SET created_at = now() - interval '" + std::to_string(i + 1) +
         " minutes' WHERE id = '" + requests[i] + "'");
    exec("UPDATE movement_request_nodes SET request_created_at = now() - interval '" +
         std::to_string(i + 1) + " minutes' WHERE id = '" + nodes[i] + "'");
    make_due(*this, nodes[i]);
  }
  BOOST_TEST(settings.node_observe_batch_size == 10); // the reference's LIMIT 10
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 10);
  for (int i = 0; i < 12; ++i)
    BOOST_TEST_CONTEXT("request " << i) {
      BOOST_TEST(node_col(*this, nodes[i], "node_state") == (i >= 2 ? "COMPLETED" : "SUBMITTED"));
    }
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 2);
}

BOOST_FIXTURE_TEST_CASE(observation_timeout, test::reference_db_fixture) {
  add_template(one_node("timed", "chain_transfer",
                        R"("side_effect": true, "timeout_policy": {"observe_seconds": 1})"));
  // Enforcement off (the default): a late node is observed normally.
  BOOST_REQUIRE(!settings.observe_timeout_enforcement_enabled);
  std::string relaxed;
  auto n1 = submitted(*this, "timed", &relaxed);
  exec("UPDATE movement_request_nodes SET started_at = now() - interval '10 seconds'"
       " WHERE id = '" +
       n1 + "'");
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n1, "node_state") == "COMPLETED");
  BOOST_TEST(node_col(*this, n1, "observe_count") == "1");

  // Enforcement on: UNKNOWN(OBSERVATION_TIMEOUT) without asking the executor.
  settings.observe_timeout_enforcement_enabled = true;
  apply_settings();
  std::string strict;
  auto n2 = submitted(*this, "timed", &strict);
  exec("UPDATE movement_request_nodes SET started_at = now() - interval '10 seconds'"
       " WHERE id = '" +
       n2 + "'");
  auto node_events_before = count("SELECT count(*) FROM movement_events WHERE request_id = '" +
                                  strict + "' AND event_type = 'node_state_changed'");
  auto last_event_before = count("SELECT COALESCE(max(seq), 0) FROM movement_events");
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n2, "node_state") == "UNKNOWN");
  BOOST_TEST(node_col(*this, n2, "error_code") == "OBSERVATION_TIMEOUT");
  BOOST_TEST(node_col(*this, n2, "observe_count") == "0");
  BOOST_TEST(node_col(*this, n2, "last_observed_at") == "");
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + n2 +
                   "' AND kind = 'observe_proof'") == 0);
  BOOST_TEST(!node_col(*this, n2, "unknown_since").empty());
  BOOST_TEST(scalar("SELECT dispatch_paused FROM movement_requests WHERE id = '" + strict + "'") ==
             "t");
  // The verdict commits with the observation: settled at once, so the
  // request goes to MANUAL_INTERVENTION in the same transaction.
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE request_id = '" + strict +
                   "' AND event_type = 'node_state_changed'") == node_events_before + 1);
  BOOST_TEST(count("SELECT count(DISTINCT xmin::text) FROM movement_events WHERE request_id = '" +
                   strict + "' AND seq > " + std::to_string(last_event_before)) == 1);

  auto r = reconcile(strict);
  BOOST_TEST(r.request_state == domain::request_state::manual_intervention);
  BOOST_TEST(snapshot(strict).request_state == domain::request_state::manual_intervention);
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE request_id = '" + strict +
                   "' AND event_type = 'request_attention'") == 1);
  // settled at once: recovery and the observer leave it alone
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 0);
  BOOST_TEST(node_col(*this, n2, "node_state") == "UNKNOWN");
}

BOOST_FIXTURE_TEST_CASE(claim_skips_a_locked_request_and_leaves_no_lock,
                        test::reference_db_fixture) {
  add_template(one_node("solo"));
  std::string id;
  auto n = submitted(*this, "solo", &id);
  const std::string nowait_node =
      "SELECT 1 FROM movement_request_nodes WHERE id = '" + n + "' FOR UPDATE NOWAIT";

  auto c3 = db::connect(url);
  pqxx::work holder(*c3);
  holder.exec("SELECT 1 FROM movement_requests WHERE id = '" + id + "' FOR UPDATE");

  auto c2 = db::connect(url);
  {
    pqxx::work tx2(*c2);
    BOOST_TEST(db::observe_candidates(tx2, "devnet", 10).size() == 1u); // listed, unlocked
    BOOST_TEST(!db::claim_for_observe(tx2, n, "devnet").has_value());
    BOOST_TEST(lock_is_free(url, nowait_node)); // tx2 still open
    tx2.abort();
  }
  // the whole pass skips it, without waiting
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 0);
  BOOST_TEST(node_col(*this, n, "node_state") == "SUBMITTED");
  BOOST_TEST(node_col(*this, n, "observe_count") == "0");
  holder.abort();

  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "COMPLETED");
}

// SPEC §1: the observer ends its claim (ROLLBACK) before the executor is
// called, so a slow venue never holds a lock a writer or a claim needs.
BOOST_FIXTURE_TEST_CASE(an_observation_holds_no_lock_while_the_executor_answers,
                        test::reference_db_fixture) {
  add_template(one_node("solo"));
  std::string id;
  auto n = submitted(*this, "solo", &id);
  make_due(*this, n);
  bool request_free = false, node_free = false;
  hook_sim(ctx->providers)->before_observe = [&] {
    request_free = lock_is_free(url, "SELECT 1 FROM movement_requests WHERE id = '" + id +
                                         "' FOR UPDATE NOWAIT");
    node_free = lock_is_free(url, "SELECT 1 FROM movement_request_nodes WHERE id = '" + n +
                                      "' FOR UPDATE NOWAIT");
  };
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 1);
  BOOST_TEST(request_free);
  BOOST_TEST(node_free);
  BOOST_TEST(node_col(*this, n, "node_state") == "COMPLETED");
  BOOST_TEST(node_col(*this, n, "observe_count") == "1");
  BOOST_TEST(snapshot(id).request_state == domain::request_state::completed);
}

namespace {

/// The node `n` of request `id` claimed for observation and released, as an
/// observer reads it before its executor answers.
db::claimed_node observe_claim_released(test::db_fixture& f, const std::string& n) {
  pqxx::work tx(*f.other);
  auto claimed = db::claim_for_observe(tx, n, "devnet", db::claim_scope::first_in_transaction);
  tx.abort();
  BOOST_REQUIRE(claimed.has_value());
  return *claimed;
}

/// An observation of `claimed` that keeps it OBSERVING, with its proof.
workers::handed_result still_observing(const db::claimed_node& claimed, const std::string& id,
                                       int callback_max_attempts) {
  workers::handed_result r{claimed, {}, db::event_batch(id, callback_max_attempts)};
  r.update.next_state = domain::node_state::observing;
  r.update.observed = true;
  r.update.next_observe_in_seconds = 5;
  r.events.add_artifact({claimed.id, claimed.attempt_no, "observe_proof", "{}", ""});
  return r;
}

/// Two observations of one due node, made from the same claim.
struct twin_observations {
  std::string node;
  workers::handed_result first, second;
};

twin_observations observed_twice(test::db_fixture& f) {
  f.add_template(one_node("solo"));
  std::string id;
  auto n = submitted(f, "solo", &id);
  make_due(f, n);
  auto claimed = observe_claim_released(f, n);
  const int attempts = f.settings.callback_max_attempts;
  return {n, still_observing(claimed, id, attempts), still_observing(claimed, id, attempts)};
}

/// One observation of `n` landed: counted once, its proof stored once.
void landed_once(test::db_fixture& f, const std::string& n) {
  BOOST_TEST(node_col(f, n, "observe_count") == "1");
  BOOST_TEST(node_col(f, n, "node_state") == "OBSERVING");
  BOOST_TEST(f.count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + n +
                     "' AND kind = 'observe_proof'") == 1);
}

} // namespace

// Two observers that claimed the same node from the same row (their claims
// ended before the executor answered): one observation lands, the other is
// stale by its observe_count and is dropped, never written twice.
BOOST_FIXTURE_TEST_CASE(the_same_observation_twice_lands_once, test::reference_db_fixture) {
  auto twins = observed_twice(*this);
  auto c = db::connect(url);
  auto one = workers::write_results(*c, engine(), {&twins.first}, {});
  auto two = workers::write_results(*c, engine(), {&twins.second}, {});
  BOOST_TEST((one.results.front() == workers::result_fate::written));
  BOOST_TEST((two.results.front() == workers::result_fate::stale));
  BOOST_TEST(!two.committed); // nothing to write: rolled back
  landed_once(*this, twins.node);
}

// The same two observations in one writer batch: the first is written, the
// second is stale (it read the row the first one moves on), and the batch
// commits instead of failing as a whole.
BOOST_FIXTURE_TEST_CASE(the_same_observation_twice_in_one_batch_lands_once,
                        test::reference_db_fixture) {
  auto twins = observed_twice(*this);
  auto c = db::connect(url);
  auto both = workers::write_results(*c, engine(), {&twins.first, &twins.second}, {});
  BOOST_TEST((both.results.at(0) == workers::result_fate::written));
  BOOST_TEST((both.results.at(1) == workers::result_fate::stale));
  BOOST_TEST(both.committed);
  landed_once(*this, twins.node);
}

// Reference: the observer observes multiple nodes concurrently, each in its
// own transaction, so one slow provider answer does not serialise the batch:
// the observer's fixed lane actors take their share of the pass.
BOOST_FIXTURE_TEST_CASE(lanes_observe_nodes_concurrently, mg::test::db_fixture) {
  add_template(R"({"template_key": "slow_obs", "version": 1,
    "nodes": [{"node_key": "a", "action_type": "step", "config": {"sim": {"latency_ms": 300}}}],
    "edges": []})");
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i)
    ids.push_back(create_and_approve("slow_obs"));
  // As if dispatched: SUBMITTED, due now.
  exec("UPDATE movement_requests SET request_state = 'EXECUTING'");
  exec("UPDATE movement_request_nodes SET node_state = 'SUBMITTED', attempt_no = 1,"
       " idempotency_key = id || ':1', claim_token = gen_random_uuid(),"
       " started_at = now(), next_observe_at = now()");
  caf::actor_system_config cfg;
  mg::actors::configure(cfg);
  caf::actor_system sys{cfg};
  mg::workers::observe_lanes lanes(sys, ctx, 3);
  auto start = std::chrono::steady_clock::now();
  auto r = mg::workers::observe_pass(conn, engine(), &lanes);
  auto elapsed = std::chrono::steady_clock::now() - start;
  BOOST_TEST(r.processed == 4);
  BOOST_TEST(count("SELECT count(*) FROM movement_request_nodes WHERE node_state = 'COMPLETED'") ==
             4);
  // Each lane reconciled its requests in the observation's own transaction.
  BOOST_TEST(r.reconcile.empty());
  BOOST_TEST(count("SELECT count(*) FROM movement_requests WHERE request_state = 'COMPLETED'") ==
             4);
  // Four 300 ms observations side by side, not one after the other (1.2 s).
  BOOST_TEST(std::chrono::duration<double>(elapsed).count() < 0.9);
}

BOOST_AUTO_TEST_SUITE_END()
