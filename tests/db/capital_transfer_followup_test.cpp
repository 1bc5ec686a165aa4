// capital_transfer_followup on the real database: stale pending capital
// transfers are settled from their movement's verdict (COMPLETED →
// completed; FAILED, CANCELLED, EXPIRED, REJECTED → failed) or surfaced for
// operator attention exactly once (flag, timestamp, one notification) and
// settled later when the movement finishes; young rows, settled rows and
// other network classes are left alone; a row locked by another follow-up
// is skipped.
#include <boost/test/unit_test.hpp>

#include <string>

#include "actors/workers/capital_transfer_followup.hpp"
#include "persistence/capital_transfer_store.hpp"
#include "persistence/db.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

/// A pending capital transfer created `age_seconds` ago (stale after 1800 s).
std::string capital_transfer(db_fixture& f, const std::string& movement_request_id,
                             int age_seconds = 3600, const std::string& idempotency_key = "") {
  pqxx::work tx(*f.other);
  db::capital_transfer_input in;
  in.network_class = f.settings.network_class;
  in.movement_request_id = movement_request_id;
  in.from_venue = "binance";
  in.to_venue = "base";
  in.asset = "USDC";
  in.amount = "250000.000001";
  in.requested_by = "treasury";
  in.idempotency_key = idempotency_key;
  auto id = db::create_capital_transfer(tx, in);
  tx.exec("UPDATE capital_transfer_requests SET created_at = now() - interval '" +
          std::to_string(age_seconds) + " seconds' WHERE id = '" + id + "'");
  tx.commit();
  return id;
}

/// A movement request forced into `state`.
std::string movement_in(db_fixture& f, const std::string& state) {
  auto id = f.create("t");
  f.exec("UPDATE movement_requests SET request_state = '" + state + "' WHERE id = '" + id + "'");
  return id;
}

std::string ct_col(db_fixture& f, const std::string& id, const std::string& column) {
  return f.scalar("SELECT " + column + " FROM capital_transfer_requests WHERE id = '" + id + "'");
}

long notifications_for(db_fixture& f, const std::string& id) {
  return f.count("SELECT count(*) FROM notification_outbox WHERE kind = 'capital_transfer_stale'"
                 " AND subject = '" +
                 id + "'");
}

} // namespace

BOOST_AUTO_TEST_SUITE(capital_transfer_followup)

BOOST_AUTO_TEST_CASE(verdict_follows_the_movement_state) {
  using domain::request_state;
  using workers::capital_verdict;
  BOOST_TEST(
      (workers::capital_followup_verdict(request_state::completed) == capital_verdict::complete));
  for (auto s : {request_state::failed, request_state::cancelled, request_state::expired,
                 request_state::rejected})
    BOOST_TEST((workers::capital_followup_verdict(s) == capital_verdict::fail));
  for (auto s : {request_state::pending_approval, request_state::approved, request_state::executing,
                 request_state::waiting_manual_action, request_state::manual_intervention})
    BOOST_TEST((workers::capital_followup_verdict(s) == capital_verdict::surface));
  BOOST_TEST((workers::capital_followup_verdict(std::nullopt) == capital_verdict::surface));
}

BOOST_FIXTURE_TEST_CASE(finished_movements_settle_their_capital_transfers, db_fixture) {
  add_template(one_node("t"));
  auto done = capital_transfer(*this, movement_in(*this, "COMPLETED"));
  std::string failed_ids[4];
  const char* failed_states[] = {"FAILED", "CANCELLED", "EXPIRED", "REJECTED"};
  for (int i = 0; i < 4; ++i)
    failed_ids[i] = capital_transfer(*this, movement_in(*this, failed_states[i]));
  workers::capital_followup_counts counts;
  auto r = workers::capital_transfer_followup_pass(conn, settings, &counts);
  BOOST_TEST(r.processed == 5);
  BOOST_TEST(counts.completed == 1);
  BOOST_TEST(counts.failed == 4);
  BOOST_TEST(counts.surfaced == 0);
  BOOST_TEST(ct_col(*this, done, "status") == "completed");
  BOOST_TEST(ct_col(*this, done, "resolution") == "COMPLETED");
  BOOST_TEST(ct_col(*this, done, "resolved_at") != "");
  for (int i = 0; i < 4; ++i) {
    BOOST_TEST(ct_col(*this, failed_ids[i], "status") == "failed");
    BOOST_TEST(ct_col(*this, failed_ids[i], "resolution") == failed_states[i]);
  }
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox") == 0);
  BOOST_TEST(workers::capital_transfer_followup_pass(conn, settings).processed == 0);
}

BOOST_FIXTURE_TEST_CASE(open_movement_is_surfaced_once_then_settled_when_it_ends, db_fixture) {
  add_template(one_node("t"));
  auto movement = movement_in(*this, "EXECUTING");
  auto id = capital_transfer(*this, movement);
  workers::capital_followup_counts counts;
  BOOST_TEST(workers::capital_transfer_followup_pass(conn, settings, &counts).processed == 1);
  BOOST_TEST(counts.surfaced == 1);
  BOOST_TEST(ct_col(*this, id, "status") == "pending");
  BOOST_TEST(ct_col(*this, id, "attention_required") == "t");
  BOOST_TEST(ct_col(*this, id, "attention_raised_at") != "");
  BOOST_TEST(notifications_for(*this, id) == 1);
  BOOST_TEST(scalar("SELECT payload->>'movement_state' FROM notification_outbox WHERE subject = '" +
                    id + "'") == "EXECUTING");
  BOOST_TEST(scalar("SELECT payload->>'amount' FROM notification_outbox WHERE subject = '" + id +
                    "'") == "250000.000001");
  // Flag and notification were written together.
  BOOST_TEST(scalar("SELECT xmin::text FROM notification_outbox WHERE subject = '" + id + "'") ==
             ct_col(*this, id, "xmin::text"));

  // Nothing new: nothing to do (no second notification, no drain spin).
  BOOST_TEST(workers::capital_transfer_followup_pass(conn, settings).processed == 0);
  BOOST_TEST(notifications_for(*this, id) == 1);

  exec("UPDATE movement_requests SET request_state = 'COMPLETED' WHERE id = '" + movement + "'");
  BOOST_TEST(workers::capital_transfer_followup_pass(conn, settings).processed == 1);
  BOOST_TEST(ct_col(*this, id, "status") == "completed");
  BOOST_TEST(ct_col(*this, id, "attention_required") == "f");
  BOOST_TEST(ct_col(*this, id, "attention_raised_at") != ""); // history stays
  BOOST_TEST(notifications_for(*this, id) == 1);
}

BOOST_FIXTURE_TEST_CASE(unlinked_stale_transfer_is_surfaced, db_fixture) {
  auto id = capital_transfer(*this, "");
  BOOST_TEST(workers::capital_transfer_followup_pass(conn, settings).processed == 1);
  BOOST_TEST(ct_col(*this, id, "attention_required") == "t");
  BOOST_TEST(scalar("SELECT payload->>'movement_request_id' IS NULL FROM notification_outbox"
                    " WHERE subject = '" +
                    id + "'") == "t");
  BOOST_TEST(workers::capital_transfer_followup_pass(conn, settings).processed == 0);
  BOOST_TEST(notifications_for(*this, id) == 1);
}

BOOST_FIXTURE_TEST_CASE(young_and_other_network_transfers_are_left_alone, db_fixture) {
  add_template(one_node("t"));
  auto young = capital_transfer(*this, movement_in(*this, "COMPLETED"), 60);
  auto other_class = capital_transfer(*this, movement_in(*this, "COMPLETED"));
  exec("UPDATE capital_transfer_requests SET network_class = 'testnet' WHERE id = '" + other_class +
       "'");
  BOOST_TEST(workers::capital_transfer_followup_pass(conn, settings).processed == 0);
  BOOST_TEST(ct_col(*this, young, "status") == "pending");
  BOOST_TEST(ct_col(*this, other_class, "status") == "pending");
  settings.capital_transfer_stale_seconds = 30; // the threshold is the setting
  BOOST_TEST(workers::capital_transfer_followup_pass(conn, settings).processed == 1);
  BOOST_TEST(ct_col(*this, young, "status") == "completed");
}

BOOST_FIXTURE_TEST_CASE(row_locked_by_another_followup_is_skipped, db_fixture) {
  add_template(one_node("t"));
  auto id = capital_transfer(*this, movement_in(*this, "COMPLETED"));
  {
    pqxx::work holder(*other);
    holder.exec("SELECT 1 FROM capital_transfer_requests WHERE id = '" + id + "' FOR UPDATE");
    BOOST_TEST(workers::capital_transfer_followup_pass(conn, settings).processed == 0);
  }
  BOOST_TEST(workers::capital_transfer_followup_pass(conn, settings).processed == 1);
  BOOST_TEST(ct_col(*this, id, "status") == "completed");
}

BOOST_FIXTURE_TEST_CASE(create_is_idempotent_on_its_key_and_refuses_bad_amounts, db_fixture) {
  auto a = capital_transfer(*this, "", 10, "ct-1");
  auto b = capital_transfer(*this, "", 10, "ct-1");
  BOOST_TEST(a == b);
  BOOST_TEST(count("SELECT count(*) FROM capital_transfer_requests") == 1);
  pqxx::work tx(*other);
  db::capital_transfer_input in;
  in.network_class = "devnet";
  in.from_venue = "x";
  in.to_venue = "y";
  in.asset = "USDC";
  in.amount = "0";
  in.requested_by = "t";
  BOOST_CHECK_THROW(db::create_capital_transfer(tx, in), pqxx::check_violation);
}

BOOST_AUTO_TEST_SUITE_END()
