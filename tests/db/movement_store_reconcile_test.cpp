// reconcile_request and approve_request on the real database: activation
// events, fan-in, idempotence, the needs_reconcile sweep, expiry and
// double approval.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "actors/workers/node_dispatcher.hpp"
#include "actors/workers/node_observer.hpp"
#include "actors/workers/reconcile_sweep.hpp"
#include "persistence/movement_store.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

// a fans out to b and c, which fan in to d.
const char* diamond = R"({"template_key": "diamond", "version": 1, "nodes": [
  {"node_key": "a", "action_type": "chain_transfer", "executor_key": "sim"},
  {"node_key": "b", "action_type": "chain_transfer", "executor_key": "sim"},
  {"node_key": "c", "action_type": "chain_transfer", "executor_key": "sim"},
  {"node_key": "d", "action_type": "chain_transfer", "executor_key": "sim"}],
  "edges": [["a", "b"], ["a", "c"], ["b", "d"], ["c", "d"]]})";

long events_of(test::db_fixture& f, const std::string& id, const std::string& where = "true") {
  return f.count("SELECT count(*) FROM movement_events WHERE request_id = '" + id + "' AND " +
                 where);
}

std::string states(test::db_fixture& f, const std::string& id) {
  std::string out;
  for (auto& n : f.snapshot(id).nodes)
    out +=
        (out.empty() ? "" : ",") + n.node_key + "=" + std::string(domain::to_string(n.node_state));
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(movement_store_reconcile)

BOOST_FIXTURE_TEST_CASE(approval_activates_roots_with_events, test::db_fixture) {
  add_template(diamond);
  auto id = create("diamond");
  BOOST_TEST(states(*this, id) == "a=BLOCKED,b=BLOCKED,c=BLOCKED,d=BLOCKED");
  auto before = events_of(*this, id);

  auto r = approve(id);
  BOOST_TEST((r.status == db::approve_status::approved));
  BOOST_TEST(r.reconciled.activated == 1);
  BOOST_TEST(states(*this, id) == "a=READY,b=BLOCKED,c=BLOCKED,d=BLOCKED");
  auto s = snapshot(id);
  BOOST_TEST(s.request_state == domain::request_state::approved);
  BOOST_TEST(!s.needs_reconcile);
  BOOST_TEST((s.frontier == std::vector<std::string>{"a"}));
  BOOST_TEST(events_of(*this, id, "event_type = 'request_approved'") == 1);
  BOOST_TEST(events_of(*this, id,
                       "event_type = 'node_state_changed' AND node_key = 'a'"
                       " AND payload->>'node_state' = 'READY'") == 1);
  BOOST_TEST(events_of(*this, id,
                       "event_type = 'frontier_advanced'"
                       " AND payload->'data'->'frontier' = '[\"a\"]'::jsonb") == 1);
  BOOST_TEST(events_of(*this, id) == before + 3);

  // idempotent: a second reconcile changes nothing and writes no event
  auto again = reconcile(id);
  BOOST_TEST(!again.changed);
  BOOST_TEST(again.activated == 0);
  BOOST_TEST(events_of(*this, id) == before + 3);
  BOOST_TEST(states(*this, id) == "a=READY,b=BLOCKED,c=BLOCKED,d=BLOCKED");
}

BOOST_FIXTURE_TEST_CASE(fan_out_fan_in_and_idempotence, test::reference_db_fixture) {
  add_template(diamond);
  auto id = create_and_approve("diamond");
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  // The observation reconciles in its own transaction: a's completion
  // activates both branches.
  auto before = events_of(*this, id);
  auto o = workers::observe_pass(conn, engine());
  BOOST_TEST(o.processed == 1);
  BOOST_TEST(o.activated == 2);
  BOOST_TEST(states(*this, id) == "a=COMPLETED,b=READY,c=READY,d=BLOCKED");
  BOOST_TEST(!snapshot(id).needs_reconcile);
  BOOST_TEST((snapshot(id).frontier == std::vector<std::string>{"b", "c"}));
  BOOST_TEST(events_of(*this, id) == before + 4); // a COMPLETED, b and c READY, frontier
  BOOST_TEST(events_of(*this, id,
                       "event_type = 'node_state_changed' AND payload->>'node_state' = 'READY'"
                       " AND node_key IN ('b', 'c')") == 2);
  BOOST_TEST(events_of(*this, id,
                       "event_type = 'frontier_advanced'"
                       " AND payload->'data'->'frontier' = '[\"b\", \"c\"]'::jsonb") == 1);

  auto after_first = events_of(*this, id);
  auto again = reconcile(id);
  BOOST_TEST(!again.changed);
  BOOST_TEST(events_of(*this, id) == after_first);

  // fan-in: d waits for both b and c
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  exec("UPDATE movement_request_nodes SET next_observe_at = now() + interval '1 hour'"
       " WHERE id = '" +
       node_id(*this, id, "c") + "'");
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 1);
  reconcile(id);
  BOOST_TEST(states(*this, id) == "a=COMPLETED,b=COMPLETED,c=SUBMITTED,d=BLOCKED");
  exec("UPDATE movement_request_nodes SET next_observe_at = now() WHERE id = '" +
       node_id(*this, id, "c") + "'");
  BOOST_TEST(workers::observe_pass(conn, engine()).processed == 1);
  reconcile(id);
  BOOST_TEST(states(*this, id) == "a=COMPLETED,b=COMPLETED,c=COMPLETED,d=READY");
  auto settled = events_of(*this, id);
  reconcile(id);
  BOOST_TEST(events_of(*this, id) == settled);
}

BOOST_FIXTURE_TEST_CASE(sweep_reconciles_flagged_requests, test::db_fixture) {
  add_template(diamond);
  auto id = create_and_approve("diamond");
  // a completed by a path that hands its reconcile on (recovery, an
  // operator), and nobody ran it.
  exec("UPDATE movement_requests SET request_state = 'EXECUTING', needs_reconcile = true,"
       " reconcile_requested_at = now() WHERE id = '" +
       id + "'");
  exec("UPDATE movement_request_nodes SET node_state = 'COMPLETED' WHERE request_id = '" + id +
       "' AND node_key = 'a'");

  // A live movement actor gets a moment first: a fresh flag is left alone.
  BOOST_TEST(workers::reconcile_sweep_pass(conn, engine()).processed == 0);
  BOOST_TEST(snapshot(id).needs_reconcile);
  // Its actor died: after the grace the sweep takes over.
  exec("UPDATE movement_requests SET reconcile_requested_at = now() - interval '2 seconds'"
       " WHERE id = '" +
       id + "'");
  auto r = workers::reconcile_sweep_pass(conn, engine());
  BOOST_TEST(r.processed == 1);
  BOOST_TEST(r.wake_dispatcher);
  BOOST_TEST(!snapshot(id).needs_reconcile);
  BOOST_TEST(states(*this, id) == "a=COMPLETED,b=READY,c=READY,d=BLOCKED");

  // nothing left to sweep
  auto events = events_of(*this, id);
  BOOST_TEST(workers::reconcile_sweep_pass(conn, engine()).processed == 0);
  BOOST_TEST(events_of(*this, id) == events);

  // a flag with nothing to change is still cleared
  exec("UPDATE movement_requests SET needs_reconcile = true WHERE id = '" + id + "'");
  workers::reconcile_sweep_pass(conn, engine());
  BOOST_TEST(!snapshot(id).needs_reconcile);
  BOOST_TEST(events_of(*this, id) == events);
}

BOOST_FIXTURE_TEST_CASE(sweep_reconciles_its_batch_in_one_transaction_and_a_failing_request_alone,
                        test::db_fixture) {
  add_template(diamond);
  auto flagged = [&] {
    auto id = create_and_approve("diamond");
    exec("UPDATE movement_requests SET request_state = 'EXECUTING', needs_reconcile = true,"
         " reconcile_requested_at = now() - interval '2 seconds' WHERE id = '" +
         id + "'");
    exec("UPDATE movement_request_nodes SET node_state = 'COMPLETED' WHERE request_id = '" + id +
         "' AND node_key = 'a'");
    return id;
  };
  auto in_list = [](const std::vector<std::string>& ids) {
    std::string out;
    for (auto& id : ids)
      out += (out.empty() ? "'" : ",'") + id + "'";
    return out;
  };
  std::vector<std::string> batch{flagged(), flagged(), flagged()};
  auto r = workers::reconcile_sweep_pass(conn, engine());
  BOOST_TEST(r.processed == 3);
  // One commit wrote all three request rows.
  BOOST_TEST(count("SELECT count(DISTINCT xmin::text) FROM movement_requests WHERE id IN (" +
                   in_list(batch) + ")") == 1);
  for (auto& id : batch)
    BOOST_TEST(states(*this, id) == "a=COMPLETED,b=READY,c=READY,d=BLOCKED");

  // A request whose reconcile fails sinks the batch's transaction; the
  // others are reconciled one by one and it stays flagged.
  std::vector<std::string> next{flagged(), flagged(), flagged()};
  exec("CREATE FUNCTION refuse_request_update() RETURNS trigger LANGUAGE plpgsql AS"
       " $$BEGIN RAISE EXCEPTION 'refused by the test'; END$$");
  exec("CREATE TRIGGER refuse_one BEFORE UPDATE ON movement_requests FOR EACH ROW"
       " WHEN (OLD.id = '" +
       next[1] + "') EXECUTE FUNCTION refuse_request_update()");
  r = workers::reconcile_sweep_pass(conn, engine());
  BOOST_TEST(r.processed == 2);
  BOOST_TEST(states(*this, next[0]) == "a=COMPLETED,b=READY,c=READY,d=BLOCKED");
  BOOST_TEST(states(*this, next[2]) == "a=COMPLETED,b=READY,c=READY,d=BLOCKED");
  BOOST_TEST(states(*this, next[1]) == "a=COMPLETED,b=BLOCKED,c=BLOCKED,d=BLOCKED");
  BOOST_TEST(snapshot(next[1]).needs_reconcile);
}

BOOST_FIXTURE_TEST_CASE(approval_after_expiry_is_refused, test::db_fixture) {
  add_template(diamond);
  auto id = create("diamond");
  exec("UPDATE movement_requests SET expires_at = now() - interval '1 second' WHERE id = '" + id +
       "'");
  auto row = "SELECT row_to_json(r)::text FROM movement_requests r WHERE id = '" + id + "'";
  auto before = scalar(row);
  auto events = events_of(*this, id);

  auto r = approve(id);
  BOOST_TEST((r.status == db::approve_status::expired));
  BOOST_TEST(scalar(row) == before);
  BOOST_TEST(snapshot(id).request_state == domain::request_state::pending_approval);
  BOOST_TEST(states(*this, id) == "a=BLOCKED,b=BLOCKED,c=BLOCKED,d=BLOCKED");
  BOOST_TEST(events_of(*this, id) == events);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 0);
}

BOOST_FIXTURE_TEST_CASE(approving_twice_is_a_conflict, test::db_fixture) {
  add_template(diamond);
  auto id = create("diamond");
  BOOST_TEST((approve(id).status == db::approve_status::approved));
  auto row = "SELECT row_to_json(r)::text FROM movement_requests r WHERE id = '" + id + "'";
  auto before = scalar(row);
  auto events = events_of(*this, id);

  BOOST_TEST((approve(id).status == db::approve_status::conflict));
  BOOST_TEST(scalar(row) == before);
  BOOST_TEST(events_of(*this, id) == events);
  BOOST_TEST(events_of(*this, id, "event_type = 'request_approved'") == 1);
  BOOST_TEST(
      (approve("00000000-0000-0000-0000-000000000000").status == db::approve_status::not_found));
}

BOOST_FIXTURE_TEST_CASE(several_requests_reconciled_together_end_as_each_would_alone,
                        test::db_fixture) {
  add_template(diamond);
  auto first = create_and_approve("diamond");
  auto second = create_and_approve("diamond");
  auto rejected = create("diamond");
  exec("UPDATE movement_requests SET request_state = 'REJECTED', needs_reconcile = true"
       " WHERE id = '" +
       rejected + "'");
  // first: a done, so b and c start; second: a failed, the request fails.
  exec("UPDATE movement_request_nodes SET node_state = 'COMPLETED' WHERE node_key = 'a'"
       " AND request_id = '" +
       first + "'");
  exec("UPDATE movement_request_nodes SET node_state = 'FAILED' WHERE node_key = 'a'"
       " AND request_id = '" +
       second + "'");
  const std::string missing = "00000000-0000-0000-0000-000000000001";
  std::vector<std::string> ids{second, missing, rejected, first, second};
  pqxx::work tx(*other);
  auto outcomes = db::reconcile_requests(tx, ctx->plans, ids, engine().reconcile_settings());
  tx.commit();
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  BOOST_REQUIRE(outcomes.size() == 4u);
  for (size_t i = 0; i < ids.size(); ++i) {
    auto& o = outcomes[i];
    if (ids[i] == first) {
      BOOST_TEST(o.activated == 2);
      BOOST_TEST(o.request_state == domain::request_state::approved);
      BOOST_TEST(states(*this, first) == "a=COMPLETED,b=READY,c=READY,d=BLOCKED");
      BOOST_TEST((snapshot(first).frontier == std::vector<std::string>{"b", "c"}));
    } else if (ids[i] == second) {
      BOOST_TEST(o.activated == 0);
      BOOST_TEST(o.request_state == domain::request_state::failed);
      BOOST_TEST(o.terminal);
      BOOST_TEST(events_of(*this, second, "event_type = 'request_failed'") == 1);
    } else if (ids[i] == rejected) {
      BOOST_TEST(o.found);
      BOOST_TEST(o.wrote);
      BOOST_TEST(!snapshot(rejected).needs_reconcile);
    } else {
      BOOST_TEST(!o.found);
    }
  }
  BOOST_TEST(!snapshot(first).needs_reconcile);
  BOOST_TEST(snapshot(second).request_state == domain::request_state::failed);
  BOOST_TEST(events_of(*this, first,
                       "event_type = 'node_state_changed' AND payload->>'node_state' = 'READY'"
                       " AND node_key IN ('b', 'c')") == 2);
}

BOOST_AUTO_TEST_SUITE_END()
