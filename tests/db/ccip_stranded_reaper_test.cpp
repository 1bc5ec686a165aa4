// ccip_stranded_reaper on the real database: an aged pending intent strands
// and its in-flight node goes UNKNOWN (event, new claim token, operator
// notification) and recovery then resolves it; young, resolved and
// other-network intents are left alone; a node that moved on is not
// touched; two reapers on two connections reap each intent exactly once;
// a locked request is skipped, never waited for.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "actors/workers/ccip_stranded_reaper.hpp"
#include "actors/workers/node_dispatcher.hpp"
#include "actors/workers/node_recovery.hpp"
#include "persistence/ccip_store.hpp"
#include "persistence/db.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

struct sent {
  std::string request;
  std::string node;
  std::string intent;
};

/// Dispatches every READY node (the sim accepts the submit: SUBMITTED).
void dispatch_all(db_fixture& f) {
  while (workers::dispatch_pass(f.conn, f.engine()).processed > 0) {
  }
}

std::string record_intent(db_fixture& f, const std::string& request, const std::string& node,
                          int attempt_no = 1) {
  pqxx::work tx(*f.other);
  db::ccip_intent_input in;
  in.request_id = request;
  in.node_id = node;
  in.attempt_no = attempt_no;
  in.source_chain_selector = "16015286601757825753";
  in.dest_chain_selector = "3478487238524512106";
  auto id = db::record_ccip_send_intent(tx, in);
  tx.commit();
  return id;
}

void age_intent(db_fixture& f, const std::string& intent, int seconds) {
  f.exec("UPDATE ccip_send_intent SET created_at = now() - interval '" + std::to_string(seconds) +
         " seconds' WHERE id = '" + intent + "'");
}

/// `n` one-node requests whose CCIP send (attempt 1) is SUBMITTED, each with
/// a pending intent aged `age_seconds` (the threshold is 3600 s).
std::vector<sent> submitted_sends(db_fixture& f, int n, int age_seconds = 7200) {
  f.add_template(one_node("ccip", "ccip_send"));
  std::vector<sent> out;
  for (int i = 0; i < n; ++i) {
    auto id = f.create_and_approve("ccip");
    out.push_back({id, node_id(f, id), ""});
  }
  dispatch_all(f);
  for (auto& s : out) {
    BOOST_REQUIRE(node_col(f, s.node, "node_state") == "SUBMITTED");
    s.intent = record_intent(f, s.request, s.node);
    age_intent(f, s.intent, age_seconds);
  }
  return out;
}

std::string intent_col(db_fixture& f, const std::string& id, const std::string& column) {
  return f.scalar("SELECT " + column + " FROM ccip_send_intent WHERE id = '" + id + "'");
}

long unknown_events(db_fixture& f, const std::string& request) {
  return f.count("SELECT count(*) FROM movement_events WHERE request_id = '" + request +
                 "' AND event_type = 'node_state_changed' AND payload->>'node_state' = 'UNKNOWN'"
                 " AND payload->'data'->>'error_code' = 'CCIP_SEND_STRANDED'");
}

} // namespace

BOOST_AUTO_TEST_SUITE(ccip_stranded_reaper)

BOOST_FIXTURE_TEST_CASE(aged_intent_strands_and_its_node_goes_unknown_with_event,
                        reference_db_fixture) {
  auto s = submitted_sends(*this, 1)[0];
  auto token_before = node_col(*this, s.node, "claim_token");
  workers::ccip_reap_counts counts;
  auto r = workers::ccip_stranded_reaper_pass(conn, settings, &counts);
  BOOST_TEST(r.processed == 1);
  BOOST_TEST(counts.sent_to_unknown == 1);
  BOOST_TEST(r.wake_recovery);
  BOOST_TEST(r.reconcile == std::vector<std::string>{s.request});

  BOOST_TEST(intent_col(*this, s.intent, "status") == "stranded");
  BOOST_TEST(intent_col(*this, s.intent, "stranded_at") != "");
  BOOST_TEST(intent_col(*this, s.intent, "reaped_node_state") == "SUBMITTED");
  BOOST_TEST(intent_col(*this, s.intent, "node_sent_to_recovery") == "t");
  BOOST_TEST(node_col(*this, s.node, "node_state") == "UNKNOWN");
  BOOST_TEST(node_col(*this, s.node, "error_code") == "CCIP_SEND_STRANDED");
  BOOST_TEST(node_col(*this, s.node, "unknown_since") != "");
  BOOST_TEST(node_col(*this, s.node, "claim_token") != token_before); // late results are fenced
  BOOST_TEST(request_col(*this, s.request, "dispatch_paused") == "t");
  BOOST_TEST(request_col(*this, s.request, "needs_reconcile") == "t");
  BOOST_TEST(unknown_events(*this, s.request) == 1);
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox WHERE kind = 'ccip_send_stranded'"
                   " AND subject = '" +
                   s.intent + "' AND payload->>'sent_to_recovery' = 'true'") == 1);
  // Intent, node, event and notification were written by one transaction.
  auto tx_of_intent = intent_col(*this, s.intent, "xmin::text");
  BOOST_TEST(node_col(*this, s.node, "xmin::text") == tx_of_intent);
  BOOST_TEST(scalar("SELECT xmin::text FROM notification_outbox WHERE subject = '" + s.intent +
                    "'") == tx_of_intent);
  BOOST_TEST(scalar("SELECT DISTINCT xmin::text FROM movement_events WHERE request_id = '" +
                    s.request + "' AND payload->>'node_state' = 'UNKNOWN'") == tx_of_intent);

  // Nothing is left for a second pass.
  BOOST_TEST(workers::ccip_stranded_reaper_pass(conn, settings).processed == 0);
  BOOST_TEST(unknown_events(*this, s.request) == 1);
}

BOOST_FIXTURE_TEST_CASE(recovery_resolves_the_reaped_node_from_the_provider, reference_db_fixture) {
  auto s = submitted_sends(*this, 1)[0];
  BOOST_TEST(workers::ccip_stranded_reaper_pass(conn, settings).processed == 1);
  workers::recovery_counts rc;
  BOOST_TEST(workers::recovery_pass(conn, engine(), &rc).processed == 1);
  // The sim's ledger has the attempt: recover finds it (recover_to COMPLETED).
  BOOST_TEST(rc.found == 1);
  BOOST_TEST(node_col(*this, s.node, "node_state") == "COMPLETED");
}

BOOST_FIXTURE_TEST_CASE(young_intent_is_untouched, reference_db_fixture) {
  auto s = submitted_sends(*this, 1, 60)[0]; // one minute old, threshold one hour
  BOOST_TEST(workers::ccip_stranded_reaper_pass(conn, settings).processed == 0);
  BOOST_TEST(intent_col(*this, s.intent, "status") == "pending");
  BOOST_TEST(node_col(*this, s.node, "node_state") == "SUBMITTED");
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox") == 0);
  // The threshold is the setting, not a constant.
  settings.ccip_stranded_age_seconds = 30;
  BOOST_TEST(workers::ccip_stranded_reaper_pass(conn, settings).processed == 1);
  BOOST_TEST(node_col(*this, s.node, "node_state") == "UNKNOWN");
}

BOOST_FIXTURE_TEST_CASE(resolved_intent_is_never_reaped, reference_db_fixture) {
  auto s = submitted_sends(*this, 1)[0];
  {
    pqxx::work tx(*other);
    BOOST_TEST(db::resolve_ccip_send_intent(tx, s.intent, "0xmessage", "0xtx"));
    tx.commit();
  }
  BOOST_TEST(workers::ccip_stranded_reaper_pass(conn, settings).processed == 0);
  BOOST_TEST(intent_col(*this, s.intent, "status") == "resolved");
  BOOST_TEST(intent_col(*this, s.intent, "message_id") == "0xmessage");
  BOOST_TEST(node_col(*this, s.node, "node_state") == "SUBMITTED");
  BOOST_TEST(unknown_events(*this, s.request) == 0);
  // Resolving twice is refused (the first answer stands).
  pqxx::work tx(*other);
  BOOST_TEST(!db::resolve_ccip_send_intent(tx, s.intent, "0xother"));
}

BOOST_FIXTURE_TEST_CASE(recording_the_same_attempt_twice_keeps_one_intent, reference_db_fixture) {
  auto s = submitted_sends(*this, 1)[0];
  BOOST_TEST(record_intent(*this, s.request, s.node) == s.intent);
  BOOST_TEST(count("SELECT count(*) FROM ccip_send_intent") == 1);
}

BOOST_FIXTURE_TEST_CASE(other_network_class_is_left_to_its_own_reaper, reference_db_fixture) {
  auto s = submitted_sends(*this, 1)[0];
  exec("UPDATE movement_requests SET network_class = 'testnet'");
  BOOST_TEST(workers::ccip_stranded_reaper_pass(conn, settings).processed == 0);
  BOOST_TEST(intent_col(*this, s.intent, "status") == "pending");
  settings.network_class = "testnet";
  BOOST_TEST(workers::ccip_stranded_reaper_pass(conn, settings).processed == 1);
}

BOOST_FIXTURE_TEST_CASE(node_that_moved_on_is_not_touched_but_the_operator_hears,
                        reference_db_fixture) {
  auto sends = submitted_sends(*this, 2);
  // One node completed meanwhile; the other is on a later attempt.
  exec("UPDATE movement_request_nodes SET node_state = 'COMPLETED' WHERE id = '" + sends[0].node +
       "'");
  exec("UPDATE movement_request_nodes SET attempt_no = 2 WHERE id = '" + sends[1].node + "'");
  workers::ccip_reap_counts counts;
  BOOST_TEST(workers::ccip_stranded_reaper_pass(conn, settings, &counts).processed == 2);
  BOOST_TEST(counts.stranded_only == 2);
  BOOST_TEST(counts.sent_to_unknown == 0);
  BOOST_TEST(node_col(*this, sends[0].node, "node_state") == "COMPLETED");
  BOOST_TEST(node_col(*this, sends[1].node, "node_state") == "SUBMITTED");
  for (auto& s : sends) {
    BOOST_TEST(intent_col(*this, s.intent, "status") == "stranded");
    BOOST_TEST(intent_col(*this, s.intent, "node_sent_to_recovery") == "f");
    BOOST_TEST(unknown_events(*this, s.request) == 0);
  }
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox WHERE kind = 'ccip_send_stranded'"
                   " AND payload->>'sent_to_recovery' = 'false'") == 2);
}

BOOST_FIXTURE_TEST_CASE(locked_request_is_skipped_not_waited_for, reference_db_fixture) {
  auto s = submitted_sends(*this, 1)[0];
  {
    // A reconcile (or another reaper) holds the request row.
    pqxx::work holder(*other);
    holder.exec("SELECT 1 FROM movement_requests WHERE id = '" + s.request + "' FOR UPDATE");
    workers::ccip_reap_counts counts;
    auto r = workers::ccip_stranded_reaper_pass(conn, settings, &counts);
    BOOST_TEST(r.processed == 0);
    BOOST_TEST(r.busy);
    BOOST_TEST(counts.busy == 1);
  }
  BOOST_TEST(intent_col(*this, s.intent, "status") == "pending");
  BOOST_TEST(workers::ccip_stranded_reaper_pass(conn, settings).processed == 1);
  BOOST_TEST(node_col(*this, s.node, "node_state") == "UNKNOWN");
}

BOOST_FIXTURE_TEST_CASE(two_reapers_on_two_connections_reap_each_intent_once,
                        reference_db_fixture) {
  const int n = 40;
  auto sends = submitted_sends(*this, n);
  db::connection_slot second(url);
  std::atomic<int> total{0};
  std::atomic<bool> go{false};
  auto reaper = [&](db::connection_slot& slot) {
    while (!go.load()) {
    }
    // Both drain until neither finds work (busy rows are retried).
    for (int i = 0; i < 200; ++i) {
      auto r = workers::ccip_stranded_reaper_pass(slot, settings);
      total += r.processed;
      if (r.processed == 0 && !r.busy)
        break;
    }
  };
  std::thread a(reaper, std::ref(conn));
  std::thread b(reaper, std::ref(second));
  go = true;
  a.join();
  b.join();
  BOOST_TEST(total.load() == n);
  BOOST_TEST(count("SELECT count(*) FROM ccip_send_intent WHERE status = 'stranded'") == n);
  BOOST_TEST(count("SELECT count(*) FROM movement_request_nodes WHERE node_state = 'UNKNOWN'"
                   " AND error_code = 'CCIP_SEND_STRANDED'") == n);
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE event_type = 'node_state_changed'"
                   " AND payload->>'node_state' = 'UNKNOWN'") == n);
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox WHERE kind = 'ccip_send_stranded'") ==
             n);
}

BOOST_AUTO_TEST_SUITE_END()
