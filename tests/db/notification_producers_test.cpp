// The notification producers write in the transaction of the fact itself:
// request_attention when a request reaches WAITING_MANUAL_ACTION or
// MANUAL_INTERVENTION (and at once when rule 2 would apply), one per
// attention event; callback_dlq when a callback row moves to the DLQ (again
// after a redeliver). A rolled-back fact leaves no notification.
// (core_group_failure is tested with the runtime: tests/actors.)
#include <boost/test/unit_test.hpp>

#include "actors/workers/callback_dispatcher.hpp"
#include "domain/json.hpp"
#include "persistence/callback_store.hpp"
#include "tests/support/callback_receiver.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;

namespace {

const char* side_effect_chain = R"({"template_key": "chain2", "version": 1, "nodes": [
  {"node_key": "a", "action_type": "chain_transfer", "executor_key": "sim", "side_effect": true},
  {"node_key": "b", "action_type": "chain_transfer", "executor_key": "sim", "side_effect": true}],
  "edges": [["a", "b"]]})";

long notifications(test::db_fixture& f, const std::string& kind, const std::string& subject) {
  return f.count("SELECT count(*) FROM notification_outbox WHERE kind = '" + kind +
                 "' AND subject = '" + subject + "'");
}

void set_node(test::db_fixture& f, const std::string& id, const std::string& key,
              const std::string& state) {
  f.exec("UPDATE movement_request_nodes SET node_state = '" + state + "' WHERE request_id = '" +
         id + "' AND node_key = '" + key + "'");
  f.exec("UPDATE movement_requests SET needs_reconcile = true WHERE id = '" + id + "'");
}

} // namespace

BOOST_AUTO_TEST_SUITE(notification_producers)

BOOST_FIXTURE_TEST_CASE(waiting_manual_action_enqueues_request_attention, test::db_fixture) {
  add_template(test::one_node("manual", "manual_confirm"));
  auto id = create("manual");
  BOOST_TEST(notifications(*this, "request_attention", id) == 0);
  approve(id);
  BOOST_REQUIRE(snapshot(id).request_state == domain::request_state::waiting_manual_action);
  BOOST_TEST(notifications(*this, "request_attention", id) == 1);
  // The notification names the attention event it is about.
  auto event_id = scalar("SELECT id FROM movement_events WHERE request_id = '" + id +
                         "' AND event_type = 'request_attention'");
  BOOST_TEST(scalar("SELECT dedupe_key FROM notification_outbox WHERE subject = '" + id + "'") ==
             "request_attention:" + event_id);
  auto payload = json::parse(
      scalar("SELECT payload::text FROM notification_outbox WHERE subject = '" + id + "'"));
  BOOST_REQUIRE(payload.has_value());
  BOOST_TEST(json::get_string(*payload, "request_state") == "WAITING_MANUAL_ACTION");
  BOOST_TEST(json::get_string(*payload, "network_class") == "devnet");
  BOOST_TEST(json::get_string((*payload)["data"], "reason") == "waiting_manual_action");
  // Reconciling again changes nothing and pages nobody.
  reconcile(id);
  BOOST_TEST(notifications(*this, "request_attention", id) == 1);
}

BOOST_FIXTURE_TEST_CASE(manual_intervention_enqueues_request_attention_once, test::db_fixture) {
  add_template(side_effect_chain);
  auto id = create_and_approve("chain2");
  set_node(*this, id, "a", "COMPLETED");
  set_node(*this, id, "b", "FAILED"); // broken after a side effect: rule 2
  reconcile(id);
  BOOST_REQUIRE(snapshot(id).request_state == domain::request_state::manual_intervention);
  BOOST_TEST(notifications(*this, "request_attention", id) == 1);
  auto payload = json::parse(
      scalar("SELECT payload::text FROM notification_outbox WHERE subject = '" + id + "'"));
  BOOST_TEST(json::get_string((*payload)["data"], "reason") == "manual_intervention");
  reconcile(id);
  BOOST_TEST(notifications(*this, "request_attention", id) == 1);
}

BOOST_FIXTURE_TEST_CASE(no_attention_no_notification, test::db_fixture) {
  add_template(side_effect_chain);
  auto id = create_and_approve("chain2");
  set_node(*this, id, "a", "COMPLETED");
  reconcile(id); // b becomes READY: a normal advance
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox") == 0);
}

BOOST_FIXTURE_TEST_CASE(a_rolled_back_transition_leaves_no_notification, test::db_fixture) {
  add_template(test::one_node("manual", "manual_confirm"));
  auto id = create("manual");
  {
    pqxx::work tx(conn.get());
    db::approve_request(tx, ctx->plans, id, "approver", engine().reconcile_settings());
    BOOST_TEST(tx.exec("SELECT count(*) FROM notification_outbox")[0][0].as<int>() == 1);
    tx.abort();
  }
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox") == 0);
}

BOOST_FIXTURE_TEST_CASE(callback_dlq_enqueues_one_notification_per_dlq_transition,
                        test::db_fixture) {
  test::callback_receiver receiver(100); // always HTTP 500
  add_template(test::one_node("cb_one"));
  settings.callback_secret = "cb-secret";
  settings.callback_allow_private = true; // the receiver is on loopback
  settings.wakeups_enabled = false;
  auto request = create("cb_one", "{}", receiver.url());
  auto row = scalar("SELECT id FROM movement_callback_outbox WHERE request_id = '" + request + "'");
  exec("UPDATE movement_callback_outbox SET max_attempts = 2");
  workers::callback_dispatch_pass(conn, settings);
  BOOST_TEST(notifications(*this, "callback_dlq", row) == 0); // a retry is not a DLQ
  exec("UPDATE movement_callback_outbox SET next_attempt_at = now()");
  workers::callback_dispatch_pass(conn, settings);
  BOOST_REQUIRE(scalar("SELECT status FROM movement_callback_outbox WHERE id = '" + row + "'") ==
                "dlq");
  BOOST_TEST(notifications(*this, "callback_dlq", row) == 1);
  auto payload = json::parse(
      scalar("SELECT payload::text FROM notification_outbox WHERE kind = 'callback_dlq'"));
  BOOST_TEST(json::get_string(*payload, "request_id") == request);
  BOOST_TEST(json::get_string(*payload, "last_error") == "HTTP 500");
  BOOST_TEST((*payload)["attempts"].GetInt() == 2);
  // The operator redelivers; it fails into the DLQ again: a new fact.
  BOOST_TEST((db::redeliver_callback(conn.get(), row, "ops").status == db::redeliver_status::done));
  for (int i = 0; i < 2; ++i) {
    exec("UPDATE movement_callback_outbox SET next_attempt_at = now() WHERE status = 'pending'");
    workers::callback_dispatch_pass(conn, settings);
  }
  BOOST_TEST(notifications(*this, "callback_dlq", row) == 2);
}

BOOST_AUTO_TEST_SUITE_END()
