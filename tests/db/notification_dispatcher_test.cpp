// notification_dispatcher against real PostgreSQL and a real local webhook
// receiver: one delivery per row, v3 signature checked by Python's hmac,
// unsigned without a secret, the backoff numbers and the DLQ (driven by
// next_attempt_at, never by sleeping), identical bytes on retries, the due
// filter, leases between two dispatchers, bounded timeouts, a refused
// connection, and the maker's flag / skip / group.
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>
#include <unistd.h>

#include "actors/workers/notification_dispatcher.hpp"
#include "actors/workers/worker_table.hpp"
#include "build_paths.hpp"
#include "domain/json.hpp"
#include "persistence/notification_outbox_store.hpp"
#include "persistence/notification_store.hpp"
#include "tests/support/callback_receiver.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/serve_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

const char* const secret = "notify-test-secret-42";

struct notify_fixture : test::db_fixture {
  explicit notify_fixture() {
    settings.notify_enabled = true;
    settings.notify_secret = secret;
    settings.wakeups_enabled = false;
  }
  /// Enqueues one notification; returns its id.
  std::string enqueue(const std::string& key, const std::string& payload = "{\"n\":1}") {
    pqxx::work tx(conn.get());
    BOOST_REQUIRE(db::enqueue_notification(tx, {"request_attention", "subj-" + key, key, payload}));
    tx.commit();
    return scalar("SELECT id FROM notification_outbox WHERE dedupe_key = '" + key + "'");
  }
  std::string col(const std::string& id, const std::string& column) {
    return scalar("SELECT " + column + " FROM notification_outbox WHERE id = " + id);
  }
  workers::pass_result pass() { return workers::notification_dispatch_pass(conn, settings); }
  void make_due(const std::string& id) {
    exec("UPDATE notification_outbox SET next_attempt_at = now() WHERE id = " + id);
  }
  /// Seconds from now until the row is due again, rounded.
  long backoff(const std::string& id) {
    return std::lround(std::stod(col(id, "extract(epoch FROM next_attempt_at - now())")));
  }
};

bool python_verifies_v3(const test::received_callback& r) {
  auto base = std::string(MG_BINARY_DIR) + "/ntf-" + std::to_string(getpid());
  std::ofstream(base + ".py") << R"(import hashlib, hmac, sys
secret, ts, nonce, body_file, sig = sys.argv[1:]
body = open(body_file, "rb").read()
msg = f"{ts}\n{nonce}\n{hashlib.sha256(body).hexdigest()}".encode()
sys.exit(0 if hmac.compare_digest(hmac.new(secret.encode(), msg, hashlib.sha256).hexdigest(), sig) else 1)
)";
  std::ofstream(base + ".body", std::ios::binary) << r.body;
  auto cmd = "python3 " + base + ".py '" + secret + "' '" + r.header("X-QTG-Callback-Timestamp") +
             "' '" + r.header("X-QTG-Callback-Nonce") + "' " + base + ".body '" +
             r.header("X-QTG-Callback-Signature") + "'";
  int rc = std::system(cmd.c_str());
  std::remove((base + ".py").c_str());
  std::remove((base + ".body").c_str());
  return rc == 0;
}

} // namespace

BOOST_AUTO_TEST_SUITE(notification_dispatcher)

BOOST_FIXTURE_TEST_CASE(delivers_each_row_once_signed_v3, notify_fixture) {
  test::callback_receiver receiver;
  settings.notify_webhook_url = receiver.url("/ops");
  auto id = enqueue("k1", R"({"request_id": "r-1", "reason": "manual_intervention"})");
  BOOST_TEST(pass().processed == 1);
  BOOST_REQUIRE(receiver.count() == 1u);
  auto r = receiver.received()[0];
  BOOST_TEST(col(id, "status") == "sent");
  BOOST_TEST(col(id, "attempts") == "1");
  BOOST_TEST(python_verifies_v3(r));
  BOOST_TEST(r.header("X-QTG-Callback-Signature-Version") == "v3");
  BOOST_TEST(r.header("Content-Type") == "application/json");
  BOOST_TEST(r.header("X-QTG-Notification-Kind") == "request_attention");
  auto doc = json::parse(r.body);
  BOOST_REQUIRE(doc.has_value());
  BOOST_TEST(json::get_string(*doc, "kind") == "request_attention");
  BOOST_TEST(json::get_string(*doc, "subject") == "subj-k1");
  BOOST_TEST(json::get_string(*doc, "dedupe_key") == "k1");
  BOOST_TEST((*doc)["notification_id"].GetInt64() == std::stoll(id));
  BOOST_TEST(json::get_string((*doc)["data"], "reason") == "manual_intervention");
  // Nothing is due any more: a second pass sends nothing.
  BOOST_TEST(pass().processed == 0);
  BOOST_TEST(receiver.count() == 1u);
}

BOOST_FIXTURE_TEST_CASE(without_a_secret_sends_unsigned, notify_fixture) {
  test::callback_receiver receiver;
  settings.notify_webhook_url = receiver.url();
  settings.notify_secret.clear();
  enqueue("k1");
  BOOST_TEST(pass().processed == 1);
  BOOST_REQUIRE(receiver.count() == 1u);
  BOOST_TEST(receiver.received()[0].header("X-QTG-Callback-Signature").empty());
}

BOOST_FIXTURE_TEST_CASE(failures_back_off_2_4_8_then_dlq_with_identical_bytes, notify_fixture) {
  test::callback_receiver receiver(100); // HTTP 500 every time
  settings.notify_webhook_url = receiver.url();
  settings.callback_max_attempts = 4;
  auto id = enqueue("k1");
  const long expected[] = {2, 4, 8};
  for (int attempt = 1; attempt <= 3; ++attempt) {
    BOOST_TEST(pass().processed == 1);
    BOOST_TEST(col(id, "status") == "pending");
    BOOST_TEST(col(id, "attempts") == std::to_string(attempt));
    BOOST_TEST(col(id, "last_error") == "HTTP 500");
    BOOST_TEST(backoff(id) == expected[attempt - 1]);
    BOOST_TEST(pass().processed == 0); // backing off: not due
    make_due(id);
  }
  BOOST_TEST(pass().processed == 1);
  BOOST_TEST(col(id, "status") == "dlq");
  BOOST_TEST(col(id, "attempts") == "4");
  make_due(id);
  BOOST_TEST(pass().processed == 0); // a dlq row is never sent again
  auto all = receiver.received();
  BOOST_REQUIRE(all.size() == 4u);
  for (auto& r : all) {
    BOOST_TEST(r.body == all[0].body);
    BOOST_TEST(r.header("X-QTG-Callback-Nonce") == all[0].header("X-QTG-Callback-Nonce"));
    BOOST_TEST(r.header("X-QTG-Callback-Timestamp") == all[0].header("X-QTG-Callback-Timestamp"));
    BOOST_TEST(r.header("X-QTG-Callback-Signature") == all[0].header("X-QTG-Callback-Signature"));
  }
}

BOOST_FIXTURE_TEST_CASE(backoff_is_capped_at_64_seconds, notify_fixture) {
  test::callback_receiver receiver(100);
  settings.notify_webhook_url = receiver.url();
  settings.callback_max_attempts = 20;
  auto id = enqueue("k1");
  exec("UPDATE notification_outbox SET attempts = 7 WHERE id = " + id);
  BOOST_TEST(pass().processed == 1);
  BOOST_TEST(col(id, "attempts") == "8");
  BOOST_TEST(backoff(id) == 64);
}

BOOST_FIXTURE_TEST_CASE(rows_backing_off_never_hide_due_ones, notify_fixture) {
  test::callback_receiver receiver;
  settings.notify_webhook_url = receiver.url();
  std::vector<std::string> waiting;
  for (int i = 0; i < workers::notify_batch_size + 2; ++i)
    waiting.push_back(enqueue("wait-" + std::to_string(i)));
  exec("UPDATE notification_outbox SET next_attempt_at = now() + interval '1 hour'");
  auto due = enqueue("due");
  BOOST_TEST(pass().processed == 1);
  BOOST_TEST(col(due, "status") == "sent");
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox WHERE status = 'pending'") ==
             workers::notify_batch_size + 2);
}

BOOST_FIXTURE_TEST_CASE(two_dispatchers_never_send_a_row_twice, notify_fixture) {
  test::callback_receiver receiver(0, 200ms); // slow: both passes overlap
  settings.notify_webhook_url = receiver.url();
  for (int i = 0; i < 6; ++i)
    enqueue("k" + std::to_string(i));
  db::connection_slot second(url);
  std::atomic<int> total{0};
  auto run = [&](db::connection_slot& c) {
    for (int i = 0; i < 3; ++i)
      total += workers::notification_dispatch_pass(c, settings).processed;
  };
  std::thread a([&] { run(conn); });
  std::thread b([&] { run(second); });
  a.join();
  b.join();
  BOOST_TEST(total.load() == 6);
  BOOST_TEST(receiver.count() == 6u);
  std::set<std::string> ids;
  for (auto& r : receiver.received())
    ids.insert(std::to_string((*json::parse(r.body))["notification_id"].GetInt64()));
  BOOST_TEST(ids.size() == 6u);
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox WHERE status = 'sent'"
                   " AND attempts = 1") == 6);
}

BOOST_FIXTURE_TEST_CASE(an_outcome_whose_lease_moved_on_is_dropped, notify_fixture) {
  auto id = enqueue("k1");
  auto rows = db::claim_due_notifications(conn.get(), 5, 60);
  BOOST_REQUIRE(rows.size() == 1u);
  // Another dispatcher re-claimed it after the lease ran out.
  exec("UPDATE notification_outbox SET next_attempt_at = now() + interval '1 minute'"
       " WHERE id = " +
       id);
  BOOST_TEST(db::record_notification_outcomes(conn.get(), {{rows[0].id, rows[0].lease, true, {}}},
                                              5) == 0);
  BOOST_TEST(col(id, "status") == "pending");
  BOOST_TEST(col(id, "attempts") == "0");
}

BOOST_FIXTURE_TEST_CASE(a_slow_receiver_times_out_within_the_deadline, notify_fixture) {
  test::callback_receiver receiver(0, 3s);
  settings.notify_webhook_url = receiver.url();
  settings.callback_timeout_seconds = 0.5;
  auto id = enqueue("k1");
  auto started = std::chrono::steady_clock::now();
  BOOST_TEST(pass().processed == 1);
  BOOST_TEST((std::chrono::steady_clock::now() - started < 2s));
  BOOST_TEST(col(id, "status") == "pending");
  BOOST_TEST(col(id, "last_error").rfind("timeout after 0.5 s", 0) == 0);
}

BOOST_FIXTURE_TEST_CASE(a_refused_connection_is_a_failed_attempt, notify_fixture) {
  settings.notify_webhook_url = "http://127.0.0.1:" + std::to_string(test::free_port()) + "/x";
  auto id = enqueue("k1");
  BOOST_TEST(pass().processed == 1);
  BOOST_TEST(col(id, "status") == "pending");
  BOOST_TEST(col(id, "attempts") == "1");
  BOOST_TEST(col(id, "last_error").rfind("request failed: ", 0) == 0);
}

BOOST_FIXTURE_TEST_CASE(maker_follows_flag_and_webhook_setting, test::db_fixture) {
  settings.notify_enabled = false;
  settings.notify_webhook_url = "http://127.0.0.1:9/hook";
  apply_settings();
  BOOST_TEST(!actors::make_worker("notification_dispatcher", ctx).has_value());
  settings.notify_enabled = true;
  settings.notify_webhook_url = "";
  apply_settings();
  BOOST_TEST(!actors::make_worker("notification_dispatcher", ctx).has_value()); // skipped
  settings.notify_webhook_url = "not a url";
  apply_settings();
  BOOST_TEST(!actors::make_worker("notification_dispatcher", ctx).has_value()); // skipped
  settings.notify_webhook_url = "http://127.0.0.1:9/hook";
  settings.notify_interval_seconds = 7;
  apply_settings();
  auto spec = actors::make_worker("notification_dispatcher", ctx);
  BOOST_REQUIRE(spec.has_value());
  BOOST_TEST(spec->name == "notification_dispatcher");
  BOOST_TEST(std::string(actors::to_string(spec->group)) == "sidecar");
  BOOST_TEST(spec->policy.interval_seconds == 7.0);
  // The runtime starts it: it is in the worker table.
  BOOST_TEST(actors::declared_worker("notification_dispatcher").make ==
             &actors::build_notification_dispatcher);
}

BOOST_AUTO_TEST_SUITE_END()
