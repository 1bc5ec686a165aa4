// node_dispatcher on the real database: SKIP LOCKED claims, FIFO, the
// miss-only savepoint, claim filters, write-ahead SUBMITTING, max attempts,
// conditional writes, dispatch-time failures, signing and the callback outbox.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "actors/workers/node_dispatcher.hpp"
#include "actors/workers/node_observer.hpp"
#include "domain/hash.hpp"
#include "domain/json.hpp"
#include "persistence/db.hpp"
#include "persistence/node_store.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

long ledger_rows(test::db_fixture& f, const std::string& node) {
  return f.count("SELECT count(*) FROM sim_ledger WHERE node_id = '" + node + "'");
}

/// The node row (with its request's fields) as the workers read it.
db::claimed_node read_claimed(pqxx::transaction_base& tx, const std::string& id) {
  return db::load_node(tx, id).value();
}

/// Walks the FIFO candidates the way the dispatcher does; `missed` gets the
/// ids whose claim missed.
std::optional<db::claimed_node> walk(pqxx::transaction_base& tx, std::vector<std::string>& missed) {
  for (;;) {
    auto ids = db::dispatch_candidates(tx, "devnet", missed, 8);
    for (auto& id : ids) {
      if (auto hit = db::claim_for_dispatch(tx, id, "devnet"))
        return hit;
      missed.push_back(id);
    }
    if (ids.size() < 8)
      return std::nullopt;
  }
}

/// A provider that prepares and records what it was told to give back.
struct abandon_probe : domain::executor {
  std::mutex m;
  std::vector<std::string> abandoned; // "idempotency_key payload"
  int submits = 0;
  std::optional<domain::step_result> preflight(const domain::execution_context&) override {
    return std::nullopt;
  }
  std::optional<domain::prepared_action> prepare(const domain::execution_context& ctx) override {
    domain::prepared_action a;
    a.action_type = ctx.action_type;
    a.payload = "{\"for\":" + json::quote(ctx.idempotency_key) + "}";
    a.payload_hash = domain::sha256_hex(a.payload);
    return a;
  }
  domain::step_result submit(const domain::execution_context&, const domain::prepared_action&,
                             const domain::sign_result*) override {
    ++submits;
    domain::step_result r;
    r.next_state = domain::node_state::submitted;
    return r;
  }
  domain::step_result observe(const domain::execution_context&) override { return {}; }
  domain::recover_result recover(const domain::execution_context&) override { return {}; }
  domain::health_result health() override { return {}; }
  void abandon(const domain::execution_context& ctx, const domain::prepared_action& a) override {
    std::lock_guard<std::mutex> lock(m);
    abandoned.push_back(ctx.idempotency_key + " " + a.payload);
  }
};

struct refusing_signer : domain::signer {
  domain::sign_result sign(const domain::sign_request&) override {
    throw domain::executor_error("policy says no");
  }
  domain::health_result health() override { return {}; }
};

} // namespace

BOOST_AUTO_TEST_SUITE(node_dispatcher)

BOOST_FIXTURE_TEST_CASE(two_transactions_never_claim_the_same_node, test::reference_db_fixture) {
  add_template(one_node("solo"));
  std::vector<std::string> requests;
  for (int i = 0; i < 3; ++i)
    requests.push_back(create_and_approve("solo"));
  for (int i = 0; i < 3; ++i)
    exec("UPDATE movement_requests SET created_at = now() - interval '" + std::to_string(10 - i) +
         " minutes' WHERE id = '" + requests[i] + "'");

  auto c1 = db::connect(url);
  auto c2 = db::connect(url);
  pqxx::work tx1(*c1);
  std::vector<std::string> missed1;
  auto hit1 = walk(tx1, missed1);
  BOOST_REQUIRE(hit1);
  BOOST_TEST(missed1.empty());
  BOOST_TEST(hit1->request_id == requests[0]);

  // tx1 stays open: tx2 skips its node (listed, but the claim misses) and
  // gets the next one.
  pqxx::work tx2(*c2);
  std::vector<std::string> missed2;
  auto hit2 = walk(tx2, missed2);
  BOOST_REQUIRE(hit2);
  BOOST_TEST(hit2->id != hit1->id);
  BOOST_TEST(hit2->request_id == requests[1]);
  BOOST_TEST((std::find(missed2.begin(), missed2.end(), hit1->id) != missed2.end()));
  BOOST_TEST(!db::claim_for_dispatch(tx2, hit1->id, "devnet").has_value());
  tx2.abort();
  tx1.abort();
}

BOOST_FIXTURE_TEST_CASE(concurrent_dispatchers_submit_each_node_once, test::reference_db_fixture) {
  add_template(one_node("solo"));
  constexpr int n = 40;
  for (int i = 0; i < n; ++i)
    create_and_approve("solo");
  BOOST_REQUIRE(count("SELECT count(*) FROM movement_request_nodes WHERE node_state = 'READY'") ==
                n);

  std::atomic<int> processed{0};
  std::mutex errors_mutex;
  std::vector<std::string> errors;
  auto worker = [&] {
    try {
      db::connection_slot slot(url);
      for (;;) {
        auto r = workers::dispatch_pass(slot, engine());
        if (r.processed == 0)
          break;
        processed += r.processed;
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(errors_mutex);
      errors.push_back(e.what());
    }
  };
  std::thread t1(worker), t2(worker);
  t1.join();
  t2.join();
  BOOST_TEST(errors.empty());
  for (auto& e : errors)
    BOOST_TEST_MESSAGE("dispatcher error: " << e);

  BOOST_TEST(processed.load() == n);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger") == n);
  BOOST_TEST(count("SELECT count(DISTINCT node_id) FROM sim_ledger") == n);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE attempt_no <> 1 OR fenced") == 0);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger l JOIN movement_request_nodes m"
                   " ON m.id = l.node_id WHERE l.idempotency_key = m.id || ':1'") == n);
  BOOST_TEST(count("SELECT count(*) FROM movement_request_nodes"
                   " WHERE node_state = 'SUBMITTED' AND attempt_no = 1") == n);
  // one SUBMITTING event per node: no node was claimed twice
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE event_type = 'node_state_changed'"
                   " AND payload->>'node_state' = 'SUBMITTING'") == n);
}

BOOST_FIXTURE_TEST_CASE(fifo_by_request_created_at, test::reference_db_fixture) {
  add_template(one_node("solo"));
  auto x = create_and_approve("solo");
  auto y = create_and_approve("solo");
  auto z = create_and_approve("solo");
  // created_at well apart, keeping creation order
  exec("UPDATE movement_requests SET created_at = created_at - interval '3 minutes' WHERE id = '" +
       x + "'");
  exec("UPDATE movement_requests SET created_at = created_at - interval '2 minutes' WHERE id = '" +
       y + "'");
  exec("UPDATE movement_requests SET created_at = created_at - interval '1 minutes' WHERE id = '" +
       z + "'");
  BOOST_REQUIRE(scalar("SELECT string_agg(id::text, ',' ORDER BY created_at)"
                       " FROM movement_requests") == x + "," + y + "," + z);
  // Rewrite the rows newest first, so physical order is the reverse of FIFO
  // order: only an ORDER BY on the request's age gets it right.
  for (auto& id : {z, y, x}) {
    exec("UPDATE movement_requests SET updated_at = updated_at WHERE id = '" + id + "'");
    exec("UPDATE movement_request_nodes SET updated_at = updated_at WHERE request_id = '" + id +
         "'");
  }

  std::vector<std::string> order = {x, y, z};
  for (size_t i = 0; i < order.size(); ++i) {
    auto r = workers::dispatch_pass(conn, engine());
    BOOST_TEST(r.processed == 1);
    for (size_t j = 0; j < order.size(); ++j)
      BOOST_TEST(node_state(order[j], "a") == (j <= i ? "SUBMITTED" : "READY"),
                 "after pass " << i << " request " << j);
  }
  // the provider saw them in the same order
  auto ledger_order =
      scalar("SELECT string_agg(m.request_id::text, ',' ORDER BY l.accepted_at)"
             " FROM sim_ledger l JOIN movement_request_nodes m ON m.id = l.node_id");
  BOOST_TEST(ledger_order == x + "," + y + "," + z);
}

BOOST_FIXTURE_TEST_CASE(miss_releases_partial_locks, test::reference_db_fixture) {
  add_template(one_node("solo"));
  auto r1 = create_and_approve("solo");
  auto r2 = create_and_approve("solo");
  exec("UPDATE movement_requests SET created_at = now() - interval '2 minutes' WHERE id = '" + r1 +
       "'");
  auto n1 = node_id(*this, r1);
  auto n2 = node_id(*this, r2);
  const std::string nowait_n1 =
      "SELECT 1 FROM movement_request_nodes WHERE id = '" + n1 + "' FOR UPDATE NOWAIT";

  // A third party holds r1's request row.
  auto c3 = db::connect(url);
  pqxx::work holder(*c3);
  holder.exec("SELECT 1 FROM movement_requests WHERE id = '" + r1 + "' FOR UPDATE");

  auto c2 = db::connect(url);
  pqxx::work tx2(*c2);
  BOOST_TEST(!db::claim_for_dispatch(tx2, n1, "devnet").has_value());
  // tx2 is still open and holds no lock on r1's node
  BOOST_TEST(lock_is_free(url, nowait_n1));

  // the walk goes on to r2's node
  std::vector<std::string> missed;
  auto hit = walk(tx2, missed);
  BOOST_REQUIRE(hit);
  BOOST_TEST(hit->id == n2);
  BOOST_TEST((missed == std::vector<std::string>{n1}));
  BOOST_TEST(lock_is_free(url, nowait_n1));
  // r2's node is held by tx2
  BOOST_TEST(!lock_is_free(url, "SELECT 1 FROM movement_request_nodes WHERE id = '" + n2 +
                                    "' FOR UPDATE NOWAIT"));
  tx2.abort();

  // Control (documents why the savepoint matters on this PostgreSQL): the
  // same joined claim without a savepoint keeps the node locked.
  pqxx::work raw(*c2);
  auto r = raw.exec_params("SELECT n.id FROM movement_request_nodes n"
                           " JOIN movement_requests r ON r.id = n.request_id WHERE n.id = $1"
                           " FOR UPDATE OF n, r SKIP LOCKED",
                           n1);
  BOOST_TEST(r.empty());
  BOOST_WARN_MESSAGE(!lock_is_free(url, nowait_n1),
                     "the raw claim left no partial lock: the savepoint check above is vacuous");
  raw.abort();
  holder.abort();
}

// The dispatcher's own walk: each claim is the first statement of its
// transaction, so ending that transaction is what releases a miss's
// partial locks (no savepoint round trips on a hit).
BOOST_FIXTURE_TEST_CASE(first_in_transaction_claim_releases_a_miss_when_it_ends,
                        test::reference_db_fixture) {
  add_template(one_node("solo"));
  auto r1 = create_and_approve("solo");
  auto r2 = create_and_approve("solo");
  auto n1 = node_id(*this, r1);
  auto n2 = node_id(*this, r2);
  const std::string nowait_n1 =
      "SELECT 1 FROM movement_request_nodes WHERE id = '" + n1 + "' FOR UPDATE NOWAIT";
  const auto first = db::claim_scope::first_in_transaction;

  auto c3 = db::connect(url);
  pqxx::work holder(*c3);
  holder.exec("SELECT 1 FROM movement_requests WHERE id = '" + r1 + "' FOR UPDATE");

  auto c2 = db::connect(url);
  {
    pqxx::work tx(*c2);
    BOOST_TEST(!db::claim_for_dispatch(tx, n1, "devnet", first).has_value());
    tx.abort();
  }
  BOOST_TEST(lock_is_free(url, nowait_n1)); // the aborted transaction took it along
  {
    pqxx::work tx(*c2);
    auto hit = db::claim_for_dispatch(tx, n2, "devnet", first);
    BOOST_REQUIRE(hit);
    BOOST_TEST(hit->id == n2);
    BOOST_TEST(!lock_is_free(url, "SELECT 1 FROM movement_request_nodes WHERE id = '" + n2 +
                                      "' FOR UPDATE NOWAIT"));
    tx.abort();
  }
  // The whole pass skips the held request and dispatches the other one.
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n2, "node_state") == "SUBMITTED");
  BOOST_TEST(node_col(*this, n1, "node_state") == "READY");
  BOOST_TEST(lock_is_free(url, nowait_n1));
  holder.abort();
}

BOOST_FIXTURE_TEST_CASE(claim_filters, test::reference_db_fixture) {
  add_template(one_node("solo"));
  add_template(one_node("manual", "manual_confirm"));
  auto paused = create_and_approve("solo");
  auto manual = create_and_approve("manual");
  auto mainnet = create_and_approve("solo");
  exec("UPDATE movement_requests SET dispatch_paused = true WHERE id = '" + paused + "'");
  // a READY manual node in an EXECUTING request (approve parked it
  // WAITING_MANUAL_ACTION, which the claim would filter anyway)
  BOOST_TEST(snapshot(manual).request_state == domain::request_state::waiting_manual_action);
  exec("UPDATE movement_requests SET request_state = 'EXECUTING' WHERE id = '" + manual + "'");
  exec("UPDATE movement_requests SET network_class = 'mainnet' WHERE id = '" + mainnet + "'");
  auto np = node_id(*this, paused), nm = node_id(*this, manual), nn = node_id(*this, mainnet);
  for (auto& id : {np, nm, nn})
    BOOST_REQUIRE(node_col(*this, id, "node_state") == "READY");

  {
    pqxx::work tx(*other);
    BOOST_TEST(db::dispatch_candidates(tx, "devnet", {}, 8).empty());
    for (auto& id : {np, nm, nn})
      BOOST_TEST(!db::claim_for_dispatch(tx, id, "devnet").has_value(), id);
    tx.abort();
  }
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 0);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger") == 0);
  for (auto& id : {np, nm, nn})
    BOOST_TEST(node_col(*this, id, "node_state") == "READY");

  // Controls: each node is claimable once its filter no longer applies.
  exec("UPDATE movement_requests SET dispatch_paused = false WHERE id = '" + paused + "'");
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, np, "node_state") == "SUBMITTED");
  exec("UPDATE movement_request_nodes SET action_type = 'confirm' WHERE id = '" + nm + "'");
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, nm, "node_state") == "SUBMITTED");
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 0);
  settings.network_class = "mainnet";
  apply_settings();
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, nn, "node_state") == "SUBMITTED");
}

BOOST_FIXTURE_TEST_CASE(write_ahead_submitting_and_first_dispatch, test::reference_db_fixture) {
  add_template(R"({"template_key": "pair", "version": 1, "nodes": [
    {"node_key": "a", "action_type": "chain_transfer", "executor_key": "sim"},
    {"node_key": "b", "action_type": "chain_transfer", "executor_key": "sim"}]})");
  auto id = create_and_approve("pair");
  BOOST_TEST(snapshot(id).request_state == domain::request_state::approved);
  auto a = node_id(*this, id, "a");

  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, a, "node_state") == "SUBMITTED");
  BOOST_TEST(node_col(*this, a, "attempt_no") == "1");
  BOOST_TEST(node_col(*this, a, "idempotency_key") == a + ":1");
  BOOST_TEST(!node_col(*this, a, "claim_token").empty());
  BOOST_TEST(node_col(*this, a, "claimed_by") == "test-node");
  BOOST_TEST(!node_col(*this, a, "started_at").empty());
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + a +
                   "' AND kind = 'prepared_action' AND attempt_no = 1") == 1);
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + a +
                   "' AND kind = 'submit_proof' AND attempt_no = 1") == 1);
  BOOST_TEST(snapshot(id).request_state == domain::request_state::executing);
  // the SUBMITTING step was recorded before SUBMITTED
  BOOST_TEST(scalar("SELECT string_agg(payload->>'node_state', ',' ORDER BY seq)"
                    " FROM movement_events WHERE request_id = '" +
                    id + "' AND node_key = 'a' AND event_type = 'node_state_changed'") ==
             "READY,SUBMITTING,SUBMITTED");

  // the second node's dispatch does not emit request_executing again
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_state(id, "b") == "SUBMITTED");
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE request_id = '" + id +
                   "' AND event_type = 'request_executing'") == 1);
}

BOOST_FIXTURE_TEST_CASE(submitting_is_committed_before_submit, test::reference_db_fixture) {
  // Every sim call sleeps 600 ms: the SUBMITTING row must be visible (and
  // the provider's ledger still empty) while submit runs.
  add_template(one_node("slow", "chain_transfer", R"("config": {"sim": {"latency_ms": 600}})"));
  auto id = create_and_approve("slow");
  auto a = node_id(*this, id);
  std::string error;
  std::thread dispatcher([&] {
    try {
      workers::dispatch_pass(conn, engine());
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  bool seen_write_ahead = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    auto row = scalar("SELECT node_state || '|' || attempt_no || '|' ||"
                      " COALESCE(idempotency_key, '') || '|' || (claim_token IS NOT NULL) || '|' ||"
                      " (SELECT count(*) FROM sim_ledger WHERE node_id = n.id)"
                      " FROM movement_request_nodes n WHERE id = '" +
                      a + "'");
    if (row == "SUBMITTING|1|" + a + ":1|true|0")
      seen_write_ahead = true;
    if (row.rfind("SUBMITTED", 0) == 0)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  dispatcher.join();
  BOOST_TEST(error.empty(), error);
  BOOST_TEST(seen_write_ahead);
  BOOST_TEST(node_col(*this, a, "node_state") == "SUBMITTED");
  BOOST_TEST(ledger_rows(*this, a) == 1);
}

BOOST_FIXTURE_TEST_CASE(sixth_attempt_fails_with_max_attempts, test::reference_db_fixture) {
  add_template(one_node("solo"));
  auto fifth = create_and_approve("solo");
  auto sixth = create_and_approve("solo");
  exec("UPDATE movement_requests SET created_at = now() - interval '1 minute' WHERE id = '" +
       fifth + "'");
  auto n5 = node_id(*this, fifth), n6 = node_id(*this, sixth);
  exec("UPDATE movement_request_nodes SET attempt_no = 4 WHERE id = '" + n5 + "'");
  exec("UPDATE movement_request_nodes SET attempt_no = 5 WHERE id = '" + n6 + "'");

  // attempt 5 is still allowed
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n5, "node_state") == "SUBMITTED");
  BOOST_TEST(node_col(*this, n5, "attempt_no") == "5");
  BOOST_TEST(node_col(*this, n5, "idempotency_key") == n5 + ":5");

  // attempt 6 is not
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n6, "node_state") == "FAILED");
  BOOST_TEST(node_col(*this, n6, "error_code") == "MAX_ATTEMPTS");
  BOOST_TEST(node_col(*this, n6, "attempt_no") == "5");
  BOOST_TEST(ledger_rows(*this, n6) == 0);
  BOOST_TEST(request_col(*this, sixth, "dispatch_paused") == "t");
  BOOST_TEST(request_col(*this, sixth, "needs_reconcile") == "t");
  reconcile(sixth);
  BOOST_TEST(snapshot(sixth).request_state == domain::request_state::failed);
}

BOOST_FIXTURE_TEST_CASE(stale_result_changes_nothing, test::reference_db_fixture) {
  add_template(one_node("solo"));
  auto id = create_and_approve("solo");
  auto a = node_id(*this, id);
  exec("UPDATE movement_requests SET request_state = 'EXECUTING' WHERE id = '" + id + "'");
  exec("UPDATE movement_request_nodes SET node_state = 'SUBMITTING', attempt_no = 1,"
       " idempotency_key = id || ':1', claim_token = gen_random_uuid(), started_at = now(),"
       " claimed_at = now(), claimed_by = 'test-node' WHERE id = '" +
       a + "'");
  const std::string node_row =
      "SELECT row_to_json(n)::text FROM movement_request_nodes n WHERE id = '" + a + "'";
  const std::string request_row =
      "SELECT row_to_json(r)::text FROM movement_requests r WHERE id = '" + id + "'";
  const std::string events = "SELECT count(*) FROM movement_events WHERE request_id = '" + id + "'";
  auto node_before = scalar(node_row), request_before = scalar(request_row);
  auto events_before = count(events);

  db::node_update u;
  u.next_state = domain::node_state::unknown;
  u.provider_state = "LATE";
  u.provider_refs = R"({"late": true})";
  u.error_code = "SUBMIT_ERROR";

  auto c = db::connect(url);
  {
    pqxx::work tx(*c);
    auto n = read_claimed(tx, a);
    n.claim_token = tx.exec("SELECT gen_random_uuid()::text")[0][0].c_str();
    db::event_batch batch(id, settings.callback_max_attempts);
    BOOST_CHECK_THROW(db::apply_node_update(tx, n, u, batch), db::stale_write);
    tx.abort();
  }
  BOOST_TEST(scalar(node_row) == node_before);
  BOOST_TEST(scalar(request_row) == request_before);
  BOOST_TEST(count(events) == events_before);
  {
    pqxx::work tx(*c);
    auto n = read_claimed(tx, a);
    n.attempt_no = 2; // right token, wrong attempt
    db::event_batch batch(id, settings.callback_max_attempts);
    BOOST_CHECK_THROW(db::apply_node_update(tx, n, u, batch), db::stale_write);
    tx.abort();
  }
  BOOST_TEST(scalar(node_row) == node_before);
  BOOST_TEST(scalar(request_row) == request_before);

  // Control: the matching (attempt, token) applies.
  {
    pqxx::work tx(*c);
    auto n = read_claimed(tx, a);
    db::event_batch batch(id, settings.callback_max_attempts);
    auto fx = db::apply_node_update(tx, n, u, batch);
    BOOST_TEST(fx.applied);
    BOOST_TEST(fx.pauses_dispatch);
    batch.flush(tx);
    tx.commit();
  }
  BOOST_TEST(node_col(*this, a, "node_state") == "UNKNOWN");
  BOOST_TEST(node_col(*this, a, "error_code") == "SUBMIT_ERROR");
  BOOST_TEST(!node_col(*this, a, "unknown_since").empty());
  BOOST_TEST(request_col(*this, id, "dispatch_paused") == "t");
}

BOOST_FIXTURE_TEST_CASE(unresolved_ref_and_plan_drift_fail_the_node, test::reference_db_fixture) {
  add_template(one_node("refs", "chain_transfer", R"("config": {"x": "$ref:input.missing"})"));
  add_template(one_node("solo"));
  auto unresolved = create_and_approve("refs");
  auto drift = create_and_approve("solo");
  auto resolved = create("refs", R"({"missing": "here"})");
  approve(resolved);
  exec("UPDATE movement_requests SET created_at = now() - interval '3 minutes' WHERE id = '" +
       unresolved + "'");
  exec("UPDATE movement_requests SET created_at = now() - interval '2 minutes' WHERE id = '" +
       drift + "'");
  exec("UPDATE movement_requests SET compiled_plan_hash = 'bogus' WHERE id = '" + drift + "'");

  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  auto nu = node_id(*this, unresolved);
  BOOST_TEST(node_col(*this, nu, "node_state") == "FAILED");
  BOOST_TEST(node_col(*this, nu, "error_code") == "CONFIG_REF_UNRESOLVED");
  BOOST_TEST(ledger_rows(*this, nu) == 0);
  BOOST_TEST(request_col(*this, unresolved, "dispatch_paused") == "t");

  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  auto nd = node_id(*this, drift);
  BOOST_TEST(node_col(*this, nd, "node_state") == "FAILED");
  BOOST_TEST(node_col(*this, nd, "error_code") == "PLAN_HASH_DRIFT");
  BOOST_TEST(ledger_rows(*this, nd) == 0);

  // Control: the same template with the input present dispatches.
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_state(resolved, "a") == "SUBMITTED");
}

BOOST_FIXTURE_TEST_CASE(sim_outcomes_at_dispatch, test::reference_db_fixture) {
  add_template(
      one_node("f_pre", "chain_transfer", R"("config": {"sim": {"fail_at": "preflight"}})"));
  add_template(
      one_node("f_prep", "chain_transfer", R"("config": {"sim": {"fail_at": "prepare"}})"));
  add_template(one_node("f_sub", "chain_transfer", R"("config": {"sim": {"fail_at": "submit"}})"));
  add_template(
      one_node("u_sub", "chain_transfer", R"("config": {"sim": {"unknown_at": "submit"}})"));

  auto run_one = [&](const std::string& key) {
    auto id = create_and_approve(key);
    BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1, key);
    return id;
  };

  auto pre = run_one("f_pre");
  auto n = node_id(*this, pre);
  BOOST_TEST(node_col(*this, n, "node_state") == "FAILED");
  BOOST_TEST(node_col(*this, n, "error_code") == "SIM_PREFLIGHT_FAILED");
  BOOST_TEST(node_col(*this, n, "attempt_no") == "0");
  BOOST_TEST(ledger_rows(*this, n) == 0);
  BOOST_TEST(request_col(*this, pre, "dispatch_paused") == "t");

  auto prep = run_one("f_prep");
  n = node_id(*this, prep);
  BOOST_TEST(node_col(*this, n, "node_state") == "FAILED");
  BOOST_TEST(node_col(*this, n, "error_code") == "PREPARE_EMPTY");
  BOOST_TEST(ledger_rows(*this, n) == 0);
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + n + "'") == 0);

  auto sub = run_one("f_sub");
  n = node_id(*this, sub);
  BOOST_TEST(node_col(*this, n, "node_state") == "FAILED");
  BOOST_TEST(node_col(*this, n, "error_code") == "SIM_SUBMIT_REFUSED");
  BOOST_TEST(node_col(*this, n, "attempt_no") == "1");
  BOOST_TEST(ledger_rows(*this, n) == 0);
  BOOST_TEST(request_col(*this, sub, "dispatch_paused") == "t");

  auto unk = run_one("u_sub");
  n = node_id(*this, unk);
  BOOST_TEST(node_col(*this, n, "node_state") == "UNKNOWN");
  BOOST_TEST(ledger_rows(*this, n) == 1);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE idempotency_key = '" + n +
                   ":1' AND NOT fenced") == 1);
  BOOST_TEST(!node_col(*this, n, "unknown_since").empty());
  BOOST_TEST(request_col(*this, unk, "dispatch_paused") == "t");
}

BOOST_FIXTURE_TEST_CASE(submit_answering_completed_or_observing, test::reference_db_fixture) {
  add_template(
      one_node("s_done", "chain_transfer", R"("config": {"sim": {"submit_to": "COMPLETED"}})"));
  add_template(one_node("s_obs", "chain_transfer",
                        R"("config": {"sim": {"submit_to": "OBSERVING",
                                              "retry_after_seconds": 40}})"));
  auto done = create_and_approve("s_done");
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  auto n = node_id(*this, done);
  BOOST_TEST(node_col(*this, n, "node_state") == "COMPLETED");
  BOOST_TEST(node_col(*this, n, "next_observe_at IS NULL") == "t"); // nothing to observe
  BOOST_TEST(ledger_rows(*this, n) == 1);
  reconcile(done);
  BOOST_TEST(snapshot(done).request_state == domain::request_state::completed);
  // The observer has nothing to do for it.
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 0);

  auto obs = create_and_approve("s_obs");
  auto r = workers::dispatch_pass(conn, engine());
  BOOST_TEST(r.processed == 1);
  BOOST_TEST(r.wake_observer);
  n = node_id(*this, obs);
  BOOST_TEST(node_col(*this, n, "node_state") == "OBSERVING");
  // The provider's retry hint sets the first observation.
  double in = std::stod(node_col(*this, n, "extract(epoch FROM next_observe_at - now())"));
  BOOST_TEST((in > 30 && in <= 40), "next observation in " << in);
  reconcile(obs);
  BOOST_TEST(snapshot(obs).request_state == domain::request_state::executing);
}

BOOST_FIXTURE_TEST_CASE(provider_context_merges_predecessors_in_plan_order,
                        test::reference_db_fixture) {
  // Both predecessors give the same key; "z_first" comes first in the plan,
  // so "a_second" (later in the plan) wins, whatever order rows come back in.
  add_template(R"({"template_key": "fan_in", "version": 1,
    "nodes": [{"node_key": "z_first", "action_type": "step", "executor_key": "sim",
               "config": {"sim": {"provider_refs": {"shared": "z_first", "only_z": 1}}}},
              {"node_key": "a_second", "action_type": "step", "executor_key": "sim",
               "config": {"sim": {"provider_refs": {"shared": "a_second", "only_a": 2}}}},
              {"node_key": "join", "action_type": "step", "executor_key": "sim"}],
    "edges": [["a_second", "join"], ["z_first", "join"]]})");
  auto id = create_and_approve("fan_in");
  for (int i = 0; i < 2; ++i)
    BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 2);
  // Rewrite the first predecessor's row: its new row version now comes
  // after the second's in the table, so unordered reads return it last.
  exec("UPDATE movement_request_nodes SET updated_at = updated_at WHERE request_id = '" + id +
       "' AND node_key = 'z_first'");
  reconcile(id);
  BOOST_TEST_REQUIRE(node_state(id, "join") == "READY");
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  auto payload = scalar("SELECT payload->>'payload' FROM node_artifacts WHERE node_id = '" +
                        node_id(*this, id, "join") + "' AND kind = 'prepared_action'");
  auto doc = json::parse_trusted(payload, "prepared payload");
  auto& pc = doc["provider_context"];
  BOOST_TEST(std::string(pc["shared"].GetString()) == "a_second");
  BOOST_TEST(pc["only_z"].GetInt() == 1);
  BOOST_TEST(pc["only_a"].GetInt() == 2);
}

BOOST_FIXTURE_TEST_CASE(signing, test::reference_db_fixture) {
  add_template(one_node("unsigned", "chain_transfer", R"("signing_required": true)"));
  add_template(
      one_node("signed", "chain_transfer", R"("signing_required": true, "signer_key": "sim")"));
  auto no_signer = create_and_approve("unsigned");
  auto n = node_id(*this, no_signer);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "FAILED");
  BOOST_TEST(node_col(*this, n, "error_code") == "NO_SIGNER_BINDING");
  BOOST_TEST(ledger_rows(*this, n) == 0);

  auto with_signer = create_and_approve("signed");
  n = node_id(*this, with_signer);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "SUBMITTED");
  BOOST_TEST(ledger_rows(*this, n) == 1);
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE node_id = '" + n +
                   "' AND kind = 'sign_result' AND attempt_no = 1"
                   " AND payload->>'signature' <> ''"
                   " AND payload->>'signer_address' = '" +
                   executors::sim_signer::address + "'") == 1);
}

BOOST_FIXTURE_TEST_CASE(a_claim_ending_before_submitting_gives_back_what_prepare_reserved,
                        test::reference_db_fixture) {
  auto probe = std::make_shared<abandon_probe>();
  ctx->providers.executors["probe"] = probe;
  ctx->providers.signers["refuser"] = std::make_shared<refusing_signer>();
  // One signing node run by the probe, with `signer` appended to it.
  auto template_with = [](const std::string& key, const std::string& signer) {
    return R"({"template_key": ")" + key +
           R"(", "version": 1, "nodes": [{"node_key": "a", "action_type": "chain_transfer",)"
           R"( "executor_key": "probe", "signing_required": true)" +
           signer + "}]}";
  };
  add_template(template_with("refused", R"(, "signer_key": "refuser")"));
  add_template(template_with("unbound", ""));
  add_template(template_with("missing", R"(, "signer_key": "nobody")"));
  add_template(template_with("fine", R"(, "signer_key": "sim")"));

  std::vector<std::string> expected;
  for (auto [key, code] :
       std::vector<std::pair<std::string, std::string>>{{"refused", "SIGNING_FAILED"},
                                                        {"unbound", "NO_SIGNER_BINDING"},
                                                        {"missing", "SIGNER_NOT_FOUND"}}) {
    auto n = node_id(*this, create_and_approve(key));
    BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
    BOOST_TEST(node_col(*this, n, "node_state") == "FAILED");
    BOOST_TEST(node_col(*this, n, "error_code") == code);
    expected.push_back(n + ":1 {\"for\":\"" + n + ":1\"}");
  }
  BOOST_TEST(probe->abandoned == expected, boost::test_tools::per_element());
  BOOST_TEST(probe->submits == 0);

  // A claim that reaches SUBMITTING gives nothing back.
  auto ok = node_id(*this, create_and_approve("fine"));
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, ok, "node_state") == "SUBMITTED");
  BOOST_TEST(probe->submits == 1);
  BOOST_TEST(probe->abandoned.size() == 3u);
}

BOOST_FIXTURE_TEST_CASE(events_get_outbox_rows_with_a_callback_url, test::reference_db_fixture) {
  add_template(one_node("solo"));
  auto with_cb = create("solo", "{}", "https://example.test/cb");
  approve(with_cb);
  auto without_cb = create_and_approve("solo");
  exec("UPDATE movement_requests SET created_at = now() - interval '1 minute' WHERE id = '" +
       with_cb + "'");
  for (int i = 0; i < 2; ++i)
    workers::dispatch_pass(conn, engine());
  workers::observe_pass(conn, engine());
  reconcile(with_cb);
  reconcile(without_cb);
  BOOST_TEST(snapshot(with_cb).request_state == domain::request_state::completed);
  BOOST_TEST(snapshot(without_cb).request_state == domain::request_state::completed);

  auto events_of = [&](const std::string& id) {
    return count("SELECT count(*) FROM movement_events WHERE request_id = '" + id + "'");
  };
  BOOST_TEST(events_of(with_cb) >= 8);
  BOOST_TEST(count("SELECT count(*) FROM movement_callback_outbox WHERE request_id = '" + with_cb +
                   "'") == events_of(with_cb));
  // every event has exactly its own pending row
  BOOST_TEST(count("SELECT count(*) FROM movement_events e"
                   " LEFT JOIN movement_callback_outbox o ON o.event_id = e.id"
                   " WHERE e.request_id = '" +
                   with_cb +
                   "' AND (o.id IS NULL OR o.status <> 'pending' OR o.callback_nonce = ''"
                   " OR o.request_id <> e.request_id OR o.event_type <> e.event_type"
                   " OR o.callback_url <> 'https://example.test/cb')") == 0);
  BOOST_TEST(events_of(without_cb) >= 8);
  BOOST_TEST(count("SELECT count(*) FROM movement_callback_outbox WHERE request_id = '" +
                   without_cb + "'") == 0);
}

// Lock order request → node for every writer: a result commit waits for a
// reconcile holding the request instead of locking the node first (the event
// rows' foreign key would then wait for the request: a deadlock).
BOOST_FIXTURE_TEST_CASE(result_commit_locks_the_request_before_the_node,
                        test::reference_db_fixture) {
  add_template(one_node("lockorder"));
  auto id = create_and_approve("lockorder");
  auto nid = node_id(*this, id);
  exec("UPDATE movement_requests SET request_state = 'EXECUTING' WHERE id = '" + id + "'");
  exec("UPDATE movement_request_nodes SET node_state = 'SUBMITTING', attempt_no = 1,"
       " idempotency_key = id || ':1', claim_token = gen_random_uuid() WHERE id = '" +
       nid + "'");
  // A reconcile holds the request row.
  pqxx::work reconcile_tx(*other);
  reconcile_tx.exec("SELECT 1 FROM movement_requests WHERE id = '" + id + "' FOR UPDATE");
  // The dispatcher commits its submit result meanwhile (it must wait).
  std::atomic<bool> committed{false};
  std::string failure;
  std::thread result([&] {
    try {
      auto c = db::connect(url);
      pqxx::work tx(*c);
      auto n = db::load_node(tx, nid).value();
      db::event_batch events(id, settings.callback_max_attempts);
      db::node_update u;
      u.next_state = domain::node_state::submitted;
      db::apply_node_update(tx, n, u, events);
      events.flush(tx);
      tx.commit();
      committed = true;
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // The reconcile now locks the request's nodes: free, because the waiting
  // result commit has not touched the node.
  reconcile_tx.exec("SET LOCAL lock_timeout = '2s'");
  BOOST_CHECK_NO_THROW(reconcile_tx.exec(
      "SELECT 1 FROM movement_request_nodes WHERE request_id = '" + id + "' FOR UPDATE"));
  reconcile_tx.commit();
  result.join();
  BOOST_TEST(failure == "");
  BOOST_TEST(committed.load());
  BOOST_TEST(node_col(*this, nid, "node_state") == "SUBMITTED");
}

BOOST_AUTO_TEST_SUITE_END()
