// The engine's cheaper writes on the real database: no callback outbox work
// (and no trigger firing) for a request without a callback_url, one write of
// the request row on approve and on create, lock-only reconcile
// transactions rolled back, HOT node updates that keep the indexed columns,
// and time-ordered ids on the append-only tables. Each check reads what
// PostgreSQL counted for the transaction (pg_stat_get_xact_*) or what it
// recorded on the rows, never a timing.
#include <boost/test/unit_test.hpp>

#include <string>

#include "actors/workers/node_dispatcher.hpp"
#include "actors/workers/node_observer.hpp"
#include "actors/workers/node_result.hpp"
#include "actors/workers/reconcile_sweep.hpp"
#include "persistence/db.hpp"
#include "persistence/node_store.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

const char* chain2 = R"({"template_key": "chain2", "version": 1, "nodes": [
  {"node_key": "a", "action_type": "chain_transfer", "executor_key": "sim"},
  {"node_key": "b", "action_type": "chain_transfer", "executor_key": "sim"}],
  "edges": [["a", "b"]]})";

const char* trigger_calls_sql =
    "SELECT COALESCE(pg_stat_get_xact_function_calls('mg_notify_callback_outbox'::regproc), 0)";

/// pg_stat_get_xact_* also count this backend's earlier transactions until
/// their statistics are flushed: flush them, so the next transaction's
/// counts are its own.
void flush_stats(pqxx::connection& c) {
  pqxx::nontransaction tx(c);
  tx.exec("SELECT pg_stat_force_next_flush()");
}

long xact_long(pqxx::transaction_base& tx, const std::string& sql) {
  return tx.exec(sql)[0][0].as<long>();
}

db::create_params params(db_fixture& f, const std::string& key, const std::string& callback) {
  db::create_params p;
  p.template_key = "chain2";
  p.intent = R"({"asset": "USDC", "amount": "1.00"})";
  p.idempotency_key = key;
  p.created_by = "tester";
  p.network_class = f.settings.network_class;
  p.callback_url = callback;
  return p;
}

/// Calls of the outbox's notify trigger function this backend has flushed
/// to the shared statistics (track_functions must be on for it).
long flushed_trigger_calls(pqxx::connection& c) {
  {
    pqxx::nontransaction tx(c);
    tx.exec("SELECT pg_stat_force_next_flush()");
  }
  pqxx::nontransaction tx(c);
  return tx
      .exec("SELECT COALESCE(sum(calls), 0) FROM pg_stat_user_functions"
            " WHERE funcname = 'mg_notify_callback_outbox'")[0][0]
      .as<long>();
}

/// Updates of `table` flushed to the shared statistics, this backend's
/// included.
long flushed_updates(pqxx::connection& c, const std::string& table) {
  {
    pqxx::nontransaction tx(c);
    tx.exec("SELECT pg_stat_force_next_flush()");
  }
  pqxx::nontransaction tx(c);
  return tx.exec_params("SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = $1", table)[0][0]
      .as<long>();
}

/// One request reconciled alone, as a request writer does it.
db::reconcile_outcome reconcile_alone(pqxx::connection& c, const workers::engine& e,
                                      const std::string& id) {
  return workers::write_results(c, e, {}, {id}).reconciles.at(0);
}

} // namespace

BOOST_AUTO_TEST_SUITE(cheap_writes)

BOOST_FIXTURE_TEST_CASE(no_callback_url_writes_no_outbox_row_and_fires_no_trigger, db_fixture) {
  add_template(chain2);
  flush_stats(*other);
  pqxx::work tx(*other);
  tx.exec("SET LOCAL track_functions = 'pl'");
  auto created = db::create_request(tx, ctx->plans, params(*this, "cw-plain", ""), 5);
  auto approved =
      db::approve_request(tx, ctx->plans, created.id, "approver", engine().reconcile_settings());
  BOOST_TEST((approved.status == db::approve_status::approved));
  BOOST_TEST(xact_long(tx, "SELECT count(*) FROM movement_events WHERE request_id = '" +
                               created.id + "'") == 4); // created, approved, a READY, frontier
  BOOST_TEST(xact_long(tx, "SELECT count(*) FROM movement_callback_outbox") == 0);
  BOOST_TEST(xact_long(tx, trigger_calls_sql) == 0);

  // The same with a callback_url: every event has its outbox row, and the
  // trigger fires once per events statement (create, approve).
  auto with_cb = db::create_request(tx, ctx->plans,
                                    params(*this, "cw-callback", "https://receiver.example/cb"), 5);
  db::approve_request(tx, ctx->plans, with_cb.id, "approver", engine().reconcile_settings());
  BOOST_TEST(xact_long(tx, "SELECT count(*) FROM movement_callback_outbox WHERE request_id = '" +
                               with_cb.id + "'") == 4);
  BOOST_TEST(xact_long(tx, trigger_calls_sql) == 2);
  tx.commit();
}

BOOST_FIXTURE_TEST_CASE(node_results_and_reconciles_skip_the_outbox_without_callback_url,
                        reference_db_fixture) {
  add_template(chain2);
  {
    pqxx::nontransaction tx(conn.get());
    tx.exec("SET track_functions = 'pl'");
  }
  auto plain = create_and_approve("chain2");
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  long before = flushed_trigger_calls(conn.get());
  // The observer's result (SUBMITTED → COMPLETED) and the reconcile that
  // activates b in the same transaction: written without the outbox part.
  auto o = workers::observe_pass(conn, engine());
  BOOST_TEST(o.processed == 1);
  BOOST_TEST(o.activated == 1);
  BOOST_TEST(node_state(plain, "a") == "COMPLETED");
  BOOST_TEST(flushed_trigger_calls(conn.get()) == before);
  BOOST_TEST(count("SELECT count(*) FROM movement_callback_outbox") == 0);

  // With a callback_url the same steps write outbox rows (and fire it).
  auto cb = create("chain2", "{}", "https://receiver.example/cb");
  approve(cb);
  for (int i = 0; i < 5 && node_state(cb, "a") == "READY"; ++i)
    workers::dispatch_pass(conn, engine());
  BOOST_REQUIRE(node_state(cb, "a") == "SUBMITTED");
  before = flushed_trigger_calls(conn.get());
  for (int i = 0; i < 5 && node_state(cb, "a") != "COMPLETED"; ++i)
    workers::observe_pass(conn, engine());
  BOOST_REQUIRE(node_state(cb, "a") == "COMPLETED");
  reconcile_alone(conn.get(), engine(), cb);
  BOOST_TEST(flushed_trigger_calls(conn.get()) > before);
  BOOST_TEST(count("SELECT count(*) FROM movement_callback_outbox o JOIN movement_events e"
                   " ON e.id = o.event_id WHERE o.request_id = '" +
                   cb +
                   "' AND e.event_type = 'node_state_changed'"
                   " AND e.payload->>'node_state' = 'COMPLETED'") == 1);
}

BOOST_FIXTURE_TEST_CASE(approve_writes_the_request_row_once, db_fixture) {
  add_template(chain2);
  auto id = create("chain2");
  flush_stats(*other);
  pqxx::work tx(*other);
  auto r = db::approve_request(tx, ctx->plans, id, "approver", engine().reconcile_settings());
  BOOST_TEST((r.status == db::approve_status::approved));
  BOOST_TEST(r.reconciled.activated == 1);
  // One UPDATE of the request (approval and reconcile together) and one of
  // the activated root.
  BOOST_TEST(xact_long(tx, "SELECT pg_stat_get_xact_tuples_updated("
                           "'movement_requests'::regclass)") == 1);
  BOOST_TEST(xact_long(tx, "SELECT pg_stat_get_xact_tuples_updated("
                           "'movement_request_nodes'::regclass)") == 1);
  tx.commit();
  auto s = snapshot(id);
  BOOST_TEST(s.request_state == domain::request_state::approved);
  BOOST_TEST(!s.needs_reconcile);
  BOOST_TEST(scalar("SELECT approved_by FROM movement_requests WHERE id = '" + id + "'") ==
             "approver");
  BOOST_TEST(scalar("SELECT string_agg(event_type || COALESCE(':' || node_key, ''), ','"
                    " ORDER BY seq) FROM movement_events WHERE request_id = '" +
                    id + "'") ==
             "request_created,request_approved,node_state_changed:a,frontier_advanced");
  // A second approval is refused and writes nothing.
  flush_stats(*other);
  pqxx::work again(*other);
  auto second =
      db::approve_request(again, ctx->plans, id, "approver", engine().reconcile_settings());
  BOOST_TEST((second.status == db::approve_status::conflict));
  BOOST_TEST(xact_long(again, "SELECT pg_stat_get_xact_tuples_updated("
                              "'movement_requests'::regclass)") == 0);
  again.commit();
}

BOOST_FIXTURE_TEST_CASE(a_result_reconciled_in_its_transaction_writes_the_request_row_once,
                        reference_db_fixture) {
  add_template(chain2);
  auto id = create_and_approve("chain2");
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_REQUIRE(node_state(id, "a") == "SUBMITTED");
  exec("UPDATE movement_request_nodes SET next_observe_at = now() WHERE request_id = '" + id + "'");
  auto a = node_id(*this, id);
  auto c = db::connect(url);
  std::optional<db::claimed_node> n;
  {
    pqxx::work claim(*c);
    n = db::claim_for_observe(claim, a, settings.network_class,
                              db::claim_scope::first_in_transaction);
    claim.abort();
  }
  BOOST_REQUIRE(n.has_value());
  workers::handed_result result{*n, {}, db::event_batch(id, settings.callback_max_attempts)};
  result.update.next_state = domain::node_state::completed;
  result.update.observed = true;
  flush_stats(conn.get());
  auto before = flushed_updates(*c, "movement_requests");
  auto written = workers::write_results(*c, engine(), {&result}, {});
  BOOST_TEST(written.committed);
  BOOST_TEST((written.results.front() == workers::result_fate::written));
  BOOST_TEST(written.activated == 1);
  // The reconcile's write only: no needs_reconcile raised for it to clear.
  BOOST_TEST(flushed_updates(*c, "movement_requests") - before == 1);
  BOOST_TEST(!snapshot(id).needs_reconcile);
  BOOST_TEST(node_state(id, "a") == "COMPLETED");
  BOOST_TEST(node_state(id, "b") == "READY");
}

BOOST_FIXTURE_TEST_CASE(create_stores_the_body_hash_without_a_second_write, db_fixture) {
  add_template(chain2);
  flush_stats(*other);
  pqxx::work tx(*other);
  auto p = params(*this, "cw-hash", "");
  p.body_hash = "sha256:abc";
  auto created = db::create_request(tx, ctx->plans, p, 5);
  BOOST_TEST(!created.deduplicated);
  BOOST_TEST(xact_long(tx, "SELECT pg_stat_get_xact_tuples_updated("
                           "'movement_requests'::regclass)") == 0);
  BOOST_TEST(xact_long(tx, "SELECT count(*) FROM movement_request_nodes WHERE request_id = '" +
                               created.id + "' AND node_state = 'BLOCKED'") == 2);
  // The same key again: the existing request, nothing inserted.
  auto again = db::create_request(tx, ctx->plans, p, 5);
  BOOST_TEST(again.deduplicated);
  BOOST_TEST(again.id == created.id);
  tx.commit();
  BOOST_TEST(scalar("SELECT create_body_hash FROM movement_requests WHERE id = '" + created.id +
                    "'") == "sha256:abc");
  BOOST_TEST(count("SELECT count(*) FROM movement_requests") == 1);
  BOOST_TEST(count("SELECT count(*) FROM movement_request_nodes") == 2);
  BOOST_TEST(count("SELECT count(*) FROM movement_events") == 1);
}

BOOST_FIXTURE_TEST_CASE(reconcile_that_changes_nothing_rolls_back, db_fixture) {
  add_template(chain2);
  auto id = create_and_approve("chain2");
  // Nothing to do: the reconcile locks the request and its nodes, writes
  // nothing, and its transaction ends in a rollback (no commit record).
  auto r = reconcile_alone(conn.get(), engine(), id);
  BOOST_TEST(!r.changed);
  BOOST_TEST(!r.wrote);
  BOOST_TEST(scalar("SELECT pg_xact_status(xmax::text::xid8) FROM movement_requests WHERE id = '" +
                    id + "'") == "aborted");
  BOOST_TEST(scalar("SELECT pg_xact_status(xmax::text::xid8) FROM movement_request_nodes"
                    " WHERE request_id = '" +
                    id + "' AND node_key = 'a'") == "aborted");

  // One that writes commits: a completed by a path that left the
  // reconcile to the movement actor, the reconcile activates b.
  exec("UPDATE movement_request_nodes SET node_state = 'COMPLETED' WHERE request_id = '" + id +
       "' AND node_key = 'a'");
  auto activated = reconcile_alone(conn.get(), engine(), id);
  BOOST_TEST(activated.wrote);
  BOOST_TEST(node_state(id, "b") == "READY");

  // The sweep's lock-only pass on a flagged request with nothing to change
  // clears the flag (a write), so it commits; without the flag it is not
  // a candidate at all.
  exec("UPDATE movement_requests SET needs_reconcile = true,"
       " reconcile_requested_at = clock_timestamp() - interval '1 minute' WHERE id = '" +
       id + "'");
  workers::reconcile_sweep_pass(conn, engine());
  BOOST_TEST(!snapshot(id).needs_reconcile);
}

BOOST_FIXTURE_TEST_CASE(a_submit_and_its_inline_observation_write_the_node_row_once, db_fixture) {
  add_template(one_node("solo"));
  auto id = create_and_approve("solo");
  long before = flushed_updates(conn.get(), "movement_request_nodes");
  // SUBMITTING (write-ahead), then SUBMITTED and COMPLETED as one row write.
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_REQUIRE(node_state(id, "a") == "COMPLETED");
  BOOST_TEST(flushed_updates(conn.get(), "movement_request_nodes") - before == 2);
  BOOST_TEST(scalar("SELECT string_agg(payload->>'node_state', ',' ORDER BY seq)"
                    " FROM movement_events WHERE request_id = '" +
                    id + "' AND event_type = 'node_state_changed'") ==
             "READY,SUBMITTING,SUBMITTED,COMPLETED");
  BOOST_TEST(scalar("SELECT observe_count FROM movement_request_nodes WHERE request_id = '" + id +
                    "'") == "1");
}

BOOST_FIXTURE_TEST_CASE(node_update_that_keeps_indexed_columns_is_hot, db_fixture) {
  add_template(chain2);
  auto id = create_and_approve("chain2");
  auto node_id = scalar("SELECT id FROM movement_request_nodes WHERE request_id = '" + id +
                        "' AND node_key = 'a'");
  flush_stats(*other);
  pqxx::work tx(*other);
  auto n = db::load_node(tx, node_id);
  BOOST_REQUIRE(n);
  // A preflight/prepare error: the node stays READY, retry_at, the error
  // and updated_at change. No index names them any more.
  db::defer_after_prepare_error(tx, *n, "PREPARE_ERROR", "connection refused", 1.0);
  BOOST_TEST(xact_long(tx, "SELECT pg_stat_get_xact_tuples_updated("
                           "'movement_request_nodes'::regclass)") == 1);
  BOOST_TEST(xact_long(tx, "SELECT pg_stat_get_xact_tuples_hot_updated("
                           "'movement_request_nodes'::regclass)") == 1);
  tx.commit();
  BOOST_TEST(scalar("SELECT indexdef FROM pg_indexes WHERE indexname = 'nodes_recovery'")
                 .find("updated_at") == std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(append_only_rows_get_time_ordered_ids, reference_db_fixture) {
  add_template(chain2);
  auto id = create("chain2", "{}", "https://receiver.example/cb");
  approve(id);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  // UUID version 7 (the 13th hex digit), its first 48 bits the creation
  // time in Unix milliseconds.
  auto v7 = [&](const std::string& table, const std::string& where) {
    return count("SELECT count(*) FROM " + table + " WHERE " + where +
                 " AND (substr(id::text, 15, 1) <> '7'"
                 "  OR abs(('x' || substr(replace(id::text, '-', ''), 1, 12))::bit(48)::bigint"
                 "         - extract(epoch FROM clock_timestamp()) * 1000) > 600000)");
  };
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE request_id = '" + id + "'") >= 4);
  BOOST_TEST(v7("movement_events", "request_id = '" + id + "'") == 0);
  BOOST_TEST(
      count("SELECT count(*) FROM movement_callback_outbox WHERE request_id = '" + id + "'") >= 4);
  BOOST_TEST(v7("movement_callback_outbox", "request_id = '" + id + "'") == 0);
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts") >= 1);
  BOOST_TEST(v7("node_artifacts", "true") == 0);
  exec("INSERT INTO audit_outbox (actor, action, subject, detail)"
       " VALUES ('tester', 'create', 'movement:x', '{}')");
  BOOST_TEST(v7("audit_outbox", "true") == 0);
  // Ids of later events sort after earlier ones (to the millisecond).
  BOOST_TEST(count("SELECT count(*) FROM movement_events a JOIN movement_events b"
                   " ON b.seq > a.seq AND substr(b.id::text, 1, 13) < substr(a.id::text, 1, 13)"
                   " WHERE a.request_id = '" +
                   id + "'") == 0);
}

BOOST_AUTO_TEST_SUITE_END()
