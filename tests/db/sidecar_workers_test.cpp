// The always-on sidecars on the real database: approval expiry (batch of
// 20, its transitions, event and outbox rows in the same transaction, the
// filters, SKIP LOCKED), proposal expiry, audit promotion exactly once under
// two concurrent promoters, executor and signer health.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "actors/workers/audit_outbox_promoter.hpp"
#include "actors/workers/executor_health.hpp"
#include "actors/workers/expiration_checker.hpp"
#include "actors/workers/template_proposal_expiration.hpp"
#include "persistence/db.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

/// A pending request whose approval window closed a minute ago.
std::string create_expired(db_fixture& f, const std::string& callback_url = "") {
  auto id = f.create("t", "{}", callback_url);
  f.exec("UPDATE movement_requests SET expires_at = now() - interval '1 minute' WHERE id = '" + id +
         "'");
  return id;
}

long expired_count(db_fixture& f) {
  return f.count("SELECT count(*) FROM movement_requests WHERE request_state = 'EXPIRED'");
}

/// An executor whose health() is the given function; nothing else is called.
struct stub_executor : domain::executor {
  std::function<domain::health_result()> h;
  explicit stub_executor(std::function<domain::health_result()> f) : h(std::move(f)) {}
  std::optional<domain::step_result> preflight(const domain::execution_context&) override {
    throw std::logic_error("unused");
  }
  std::optional<domain::prepared_action> prepare(const domain::execution_context&) override {
    throw std::logic_error("unused");
  }
  domain::step_result submit(const domain::execution_context&, const domain::prepared_action&,
                             const domain::sign_result*) override {
    throw std::logic_error("unused");
  }
  domain::step_result observe(const domain::execution_context&) override {
    throw std::logic_error("unused");
  }
  domain::recover_result recover(const domain::execution_context&) override {
    throw std::logic_error("unused");
  }
  domain::health_result health() override { return h(); }
};

struct stub_signer : domain::signer {
  std::function<domain::health_result()> h;
  explicit stub_signer(std::function<domain::health_result()> f) : h(std::move(f)) {}
  domain::sign_result sign(const domain::sign_request&) override {
    throw std::logic_error("unused");
  }
  domain::health_result health() override { return h(); }
};

domain::health_result up(std::string address = "") {
  domain::health_result r;
  r.signer_address = std::move(address);
  return r;
}
domain::health_result not_up() {
  domain::health_result r;
  r.up = false;
  return r;
}
domain::health_result not_implemented() {
  domain::health_result r;
  r.implemented = false;
  return r;
}
domain::health_result throws() {
  throw domain::executor_error("provider unreachable");
}

std::string signer_col(db_fixture& f, const std::string& key, const std::string& node,
                       const std::string& column) {
  return f.scalar("SELECT " + column + " FROM signers WHERE signer_key = '" + key +
                  "' AND runtime_node = '" + node + "'");
}

const std::string good_address = "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01";

} // namespace

BOOST_AUTO_TEST_SUITE(sidecar_workers)

BOOST_FIXTURE_TEST_CASE(expiry_batch_follows_mg_expiration_batch_size, db_fixture) {
  add_template(one_node("t"));
  for (int i = 0; i < 7; ++i)
    create_expired(*this);
  settings.expiration_batch_size = 3;
  BOOST_TEST(workers::expiration_pass(conn, settings).processed == 3);
  BOOST_TEST(expired_count(*this) == 3);
  BOOST_TEST(workers::expiration_pass(conn, settings).processed == 3);
  BOOST_TEST(workers::expiration_pass(conn, settings).processed == 1);
  BOOST_TEST(expired_count(*this) == 7);
}

BOOST_FIXTURE_TEST_CASE(expiry_takes_twenty_per_pass_then_the_rest, db_fixture) {
  add_template(one_node("t"));
  for (int i = 0; i < 25; ++i)
    create_expired(*this);
  BOOST_TEST(workers::expiration_pass(conn, settings).processed == 20);
  BOOST_TEST(expired_count(*this) == 20);
  BOOST_TEST(workers::expiration_pass(conn, settings).processed == 5);
  BOOST_TEST(expired_count(*this) == 25);
  BOOST_TEST(workers::expiration_pass(conn, settings).processed == 0);
  BOOST_TEST(count("SELECT count(*) FROM movement_requests WHERE approval_status = 'rejected'") ==
             25);
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE event_type = 'request_expired'"
                   " AND payload->>'request_state' = 'EXPIRED'") == 25);
  // Nodes are left as they were: nothing ever ran.
  BOOST_TEST(count("SELECT count(*) FROM movement_request_nodes WHERE node_state <> 'BLOCKED'") ==
             0);
}

BOOST_FIXTURE_TEST_CASE(expiry_event_and_outbox_row_commit_with_the_transition, db_fixture) {
  add_template(one_node("t"));
  auto id = create_expired(*this, "https://example.com/hook");
  BOOST_TEST(workers::expiration_pass(conn, settings).processed == 1);
  BOOST_TEST(request_col(*this, id, "request_state") == "EXPIRED");
  auto event = scalar("SELECT id FROM movement_events WHERE request_id = '" + id +
                      "' AND event_type = 'request_expired'");
  BOOST_REQUIRE(!event.empty());
  BOOST_TEST(count("SELECT count(*) FROM movement_callback_outbox WHERE event_id = '" + event +
                   "' AND status = 'pending' AND event_type = 'request_expired'") == 1);
  // xmin names the writing transaction: the same one wrote all three rows.
  auto tx_of_request = scalar("SELECT xmin::text FROM movement_requests WHERE id = '" + id + "'");
  BOOST_TEST(scalar("SELECT xmin::text FROM movement_events WHERE id = '" + event + "'") ==
             tx_of_request);
  BOOST_TEST(scalar("SELECT xmin::text FROM movement_callback_outbox WHERE event_id = '" + event +
                    "'") == tx_of_request);
}

BOOST_FIXTURE_TEST_CASE(expiry_leaves_open_windows_other_states_and_network_classes, db_fixture) {
  add_template(one_node("t"));
  auto open = create("t");
  auto other_class = create_expired(*this);
  exec("UPDATE movement_requests SET network_class = 'testnet' WHERE id = '" + other_class + "'");
  auto approved = create_and_approve("t");
  exec("UPDATE movement_requests SET expires_at = now() - interval '1 minute' WHERE id = '" +
       approved + "'");
  auto due = create_expired(*this);
  BOOST_TEST(workers::expiration_pass(conn, settings).processed == 1);
  BOOST_TEST(request_col(*this, due, "request_state") == "EXPIRED");
  BOOST_TEST(request_col(*this, open, "request_state") == "PENDING_APPROVAL");
  BOOST_TEST(request_col(*this, other_class, "request_state") == "PENDING_APPROVAL");
  BOOST_TEST(request_col(*this, approved, "request_state") != "EXPIRED");
  // The testnet process expires its own.
  settings.network_class = "testnet";
  BOOST_TEST(workers::expiration_pass(conn, settings).processed == 1);
  BOOST_TEST(request_col(*this, other_class, "request_state") == "EXPIRED");
}

BOOST_FIXTURE_TEST_CASE(expiry_skips_a_request_locked_elsewhere, db_fixture) {
  add_template(one_node("t"));
  auto locked = create_expired(*this);
  auto free = create_expired(*this);
  auto holder = db::connect(url);
  {
    pqxx::work hold(*holder);
    hold.exec("SELECT 1 FROM movement_requests WHERE id = '" + locked + "' FOR UPDATE");
    BOOST_TEST(workers::expiration_pass(conn, settings).processed == 1);
    BOOST_TEST(request_col(*this, free, "request_state") == "EXPIRED");
    BOOST_TEST(request_col(*this, locked, "request_state") == "PENDING_APPROVAL");
  } // rolled back: the lock is released
  BOOST_TEST(workers::expiration_pass(conn, settings).processed == 1);
  BOOST_TEST(request_col(*this, locked, "request_state") == "EXPIRED");
}

BOOST_FIXTURE_TEST_CASE(proposal_expiry_expires_only_pending_proposals_past_their_window,
                        db_fixture) {
  auto insert = [&](const std::string& state, const std::string& expires) {
    return scalar("INSERT INTO template_proposals (template_key, plan, state, proposed_by,"
                  " expires_at) VALUES ('k', '{}', '" +
                  state + "', 'alice', " + expires + ") RETURNING id");
  };
  auto due = insert("pending", "now() - interval '1 second'");
  auto open = insert("pending", "now() + interval '1 hour'");
  auto approved = insert("approved", "now() - interval '1 hour'");
  auto rejected = insert("rejected", "now() - interval '1 hour'");
  BOOST_TEST(workers::proposal_expiration_pass(conn).processed == 1);
  auto state = [&](const std::string& id) {
    return scalar("SELECT state FROM template_proposals WHERE id = '" + id + "'");
  };
  BOOST_TEST(state(due) == "expired");
  BOOST_TEST(state(open) == "pending");
  BOOST_TEST(state(approved) == "approved");
  BOOST_TEST(state(rejected) == "rejected");
  BOOST_TEST(workers::proposal_expiration_pass(conn).processed == 0);
}

BOOST_FIXTURE_TEST_CASE(audit_rows_are_promoted_exactly_once_by_two_concurrent_promoters,
                        db_fixture) {
  constexpr int rows = 600;
  exec("INSERT INTO audit_outbox (actor, action, subject, detail)"
       " SELECT 'key-' || i, 'test.action', 'subject:' || i, jsonb_build_object('i', i)"
       " FROM generate_series(1, " +
       std::to_string(rows) + ") i");
  std::atomic<int> promoted{0};
  std::atomic<bool> go{false};
  auto promoter = [&] {
    db::connection_slot own(url);
    own.get();
    while (!go)
      std::this_thread::yield();
    // Small batches so the two interleave many times.
    while (int n = workers::audit_promotion_pass(own, 7).processed)
      promoted += n;
  };
  std::thread a(promoter), b(promoter);
  go = true;
  a.join();
  b.join();
  // Each row was claimed by exactly one promoter (the counts add up) ...
  BOOST_TEST(promoted.load() == rows);
  BOOST_TEST(count("SELECT count(*) FROM audit_outbox WHERE promoted_at IS NULL") == 0);
  // ... and landed once, unchanged, under the outbox id.
  BOOST_TEST(count("SELECT count(*) FROM audit_events") == rows);
  BOOST_TEST(count("SELECT count(*) FROM audit_events e JOIN audit_outbox o USING (id)"
                   " WHERE e.actor = o.actor AND e.action = o.action AND e.subject = o.subject"
                   " AND e.detail = o.detail AND e.occurred_at = o.occurred_at") == rows);
  BOOST_TEST(workers::audit_promotion_pass(conn).processed == 0);
  // A row written later is promoted by the next pass.
  exec("INSERT INTO audit_outbox (actor, action, subject) VALUES ('k', 'late', 's')");
  BOOST_TEST(workers::audit_promotion_pass(conn).processed == 1);
  BOOST_TEST(count("SELECT count(*) FROM audit_events WHERE action = 'late'") == 1);
}

BOOST_FIXTURE_TEST_CASE(executor_health_maps_up_down_and_not_implemented, db_fixture) {
  domain::provider_registry providers;
  providers.executors["ok"] = std::make_shared<stub_executor>([] { return up(); });
  providers.executors["sick"] = std::make_shared<stub_executor>(not_up);
  providers.executors["broken"] = std::make_shared<stub_executor>(throws);
  providers.executors["silent"] = std::make_shared<stub_executor>(not_implemented);
  // A row another check wrote before: not implemented keeps what is there.
  exec("INSERT INTO executors (executor_key, runtime_node, health_state)"
       " VALUES ('silent', 'test-node', 'down')");
  workers::health_counts counts;
  auto r = workers::executor_health_pass(conn, providers, "test-node", &counts);
  BOOST_TEST(r.processed == 4);
  BOOST_TEST(counts.up == 1);
  BOOST_TEST(counts.down == 2);
  BOOST_TEST(counts.unknown == 1);
  auto state = [&](const std::string& key) {
    return scalar("SELECT health_state FROM executors WHERE executor_key = '" + key +
                  "' AND runtime_node = 'test-node'");
  };
  BOOST_TEST(state("ok") == "up");
  BOOST_TEST(state("sick") == "down");
  BOOST_TEST(state("broken") == "down");
  BOOST_TEST(state("silent") == "down");
  BOOST_TEST(count("SELECT count(*) FROM executors WHERE last_health_checked_at IS NULL") == 0);
  // A new process with a health-less executor starts at 'unknown'.
  workers::executor_health_pass(conn, providers, "node-2");
  BOOST_TEST(scalar("SELECT health_state FROM executors WHERE executor_key = 'silent'"
                    " AND runtime_node = 'node-2'") == "unknown");
  // A recovered provider is 'up' on the next pass.
  providers.executors["broken"] = std::make_shared<stub_executor>([] { return up(); });
  workers::executor_health_pass(conn, providers, "test-node");
  BOOST_TEST(state("broken") == "up");
}

BOOST_FIXTURE_TEST_CASE(signer_observed_address_is_stored_lower_cased_only_when_valid, db_fixture) {
  domain::provider_registry providers;
  providers.signers["good"] = std::make_shared<stub_signer>([] { return up(good_address); });
  providers.signers["zero"] = std::make_shared<stub_signer>(
      [] { return up("0x0000000000000000000000000000000000000000"); });
  providers.signers["short"] = std::make_shared<stub_signer>([] { return up("0x1234"); });
  providers.signers["nothex"] = std::make_shared<stub_signer>(
      [] { return up("0xg000000000000000000000000000000000000001"); });
  providers.signers["keeps"] = std::make_shared<stub_signer>([] { return up("not an address"); });
  providers.signers["down"] = std::make_shared<stub_signer>(throws);
  exec("INSERT INTO signers (signer_key, runtime_node, health_state, observed_signer_address)"
       " VALUES ('keeps', 'test-node', 'up', '0x1111111111111111111111111111111111111111')");
  exec(
      "INSERT INTO signer_identities VALUES ('good', '0x2222222222222222222222222222222222222222'),"
      " ('other', NULL)");
  workers::executor_health_pass(conn, providers, "test-node");
  BOOST_TEST(signer_col(*this, "good", "test-node", "observed_signer_address") ==
             "0xabcdef0123456789abcdef0123456789abcdef01");
  BOOST_TEST(signer_col(*this, "good", "test-node", "health_state") == "up");
  BOOST_TEST(signer_col(*this, "zero", "test-node", "observed_signer_address") == "");
  BOOST_TEST(signer_col(*this, "short", "test-node", "observed_signer_address") == "");
  BOOST_TEST(signer_col(*this, "nothex", "test-node", "observed_signer_address") == "");
  BOOST_TEST(signer_col(*this, "keeps", "test-node", "observed_signer_address") ==
             "0x1111111111111111111111111111111111111111");
  BOOST_TEST(signer_col(*this, "down", "test-node", "health_state") == "down");
  BOOST_TEST(count("SELECT count(*) FROM signers WHERE status = 'active'") == 6);
  // The expected identity is never written by the worker.
  BOOST_TEST(scalar("SELECT expected_signer_address FROM signer_identities"
                    " WHERE signer_key = 'good'") == "0x2222222222222222222222222222222222222222");
  BOOST_TEST(count("SELECT count(*) FROM signer_identities") == 2);
}

BOOST_FIXTURE_TEST_CASE(signers_gone_from_this_process_become_orphan, db_fixture) {
  const std::string seen = "'0x3333333333333333333333333333333333333333'";
  exec("INSERT INTO signers (signer_key, runtime_node, health_state, observed_signer_address,"
       " status) VALUES ('gone', 'test-node', 'up', " +
       seen + ", 'active'), ('gone', 'other-node', 'up', " + seen +
       ", 'active'),"
       " ('back', 'test-node', 'up', NULL, 'orphan')");
  exec("INSERT INTO signer_identities VALUES ('gone', " + seen + ")");
  domain::provider_registry providers;
  providers.signers["back"] = std::make_shared<stub_signer>([] { return up(good_address); });
  workers::health_counts counts;
  workers::executor_health_pass(conn, providers, "test-node", &counts);
  BOOST_TEST(counts.orphaned == 1);
  BOOST_TEST(signer_col(*this, "gone", "test-node", "status") == "orphan");
  BOOST_TEST(signer_col(*this, "gone", "test-node", "observed_signer_address") == "");
  // Another process's row and the expected identity are untouched.
  BOOST_TEST(signer_col(*this, "gone", "other-node", "status") == "active");
  BOOST_TEST(signer_col(*this, "gone", "other-node", "observed_signer_address") ==
             "0x3333333333333333333333333333333333333333");
  BOOST_TEST(scalar("SELECT expected_signer_address FROM signer_identities") ==
             "0x3333333333333333333333333333333333333333");
  // A signer registered again is active with its observation.
  BOOST_TEST(signer_col(*this, "back", "test-node", "status") == "active");
  BOOST_TEST(signer_col(*this, "back", "test-node", "observed_signer_address") ==
             "0xabcdef0123456789abcdef0123456789abcdef01");
  // Already orphan: the next pass changes nothing.
  counts = {};
  workers::executor_health_pass(conn, providers, "test-node", &counts);
  BOOST_TEST(counts.orphaned == 0);
}

BOOST_AUTO_TEST_SUITE_END()
