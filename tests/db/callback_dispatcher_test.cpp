// callback_dispatcher against real PostgreSQL and a real local HTTP
// receiver: backoff schedule and DLQ (driven by next_attempt_at, never by
// sleeping), byte-identical v3 retries checked by Python's hmac, Standard
// Webhooks checked by the standardwebhooks npm package, the due filter,
// SKIP LOCKED between two dispatchers, leases after a crash, bounded
// timeouts, the NOTIFY wake-up, and the operator's list / redeliver.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <thread>
#include <unistd.h>

#include "actors/workers/callback_dispatcher.hpp"
#include "build_paths.hpp"
#include "domain/json.hpp"
#include "http/callback_admin.hpp"
#include "persistence/callback_store.hpp"
#include "persistence/connection_pool.hpp"
#include "services/service_context.hpp"
#include "tests/support/callback_receiver.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

const char* const v3_secret = "cb-test-secret-7f3a";
// whsec_ + base64 of 24 bytes, the Standard Webhooks secret format.
const char* const whsec_secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

struct callback_fixture : test::db_fixture {
  callback_fixture() {
    add_template(test::one_node("cb_one"));
    settings.callback_secret = v3_secret;
    settings.wakeups_enabled = false;
    settings.callback_allow_private = true; // the receivers are on loopback
  }

  /// A request with a callback_url: its request_created event is one outbox row.
  std::string outbox_row(const std::string& url) {
    auto id = create("cb_one", "{}", url);
    return scalar("SELECT id FROM movement_callback_outbox WHERE request_id = '" + id + "'");
  }
  std::string col(const std::string& row, const std::string& column) {
    return scalar("SELECT " + column + " FROM movement_callback_outbox WHERE id = '" + row + "'");
  }
  workers::pass_result pass() { return workers::callback_dispatch_pass(conn, settings); }
  void make_due(const std::string& row) {
    exec("UPDATE movement_callback_outbox SET next_attempt_at = now() WHERE id = '" + row + "'");
  }
};

std::string temp_file(const std::string& tag, const std::string& content) {
  auto path = std::string(MG_BINARY_DIR) + "/cb-" + tag + "-" + std::to_string(getpid()) + ".tmp";
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

/// Verifies a v3 delivery with Python's hmac/hashlib (not our code).
bool python_verifies_v3(const std::string& secret, const test::received_callback& r) {
  auto script = temp_file("verify-py", R"(import hashlib, hmac, sys
secret, ts, nonce, body_file, sig = sys.argv[1:]
body = open(body_file, "rb").read()
msg = f"{ts}\n{nonce}\n{hashlib.sha256(body).hexdigest()}".encode()
good = hmac.new(secret.encode(), msg, hashlib.sha256).hexdigest()
sys.exit(0 if hmac.compare_digest(good, sig) else 1)
)");
  auto body = temp_file("body", r.body);
  auto cmd = "python3 " + script + " '" + secret + "' '" + r.header("X-QTG-Callback-Timestamp") +
             "' '" + r.header("X-QTG-Callback-Nonce") + "' " + body + " '" +
             r.header("X-QTG-Callback-Signature") + "'";
  int rc = std::system(cmd.c_str());
  std::remove(script.c_str());
  std::remove(body.c_str());
  return rc == 0;
}

/// Verifies a Standard Webhooks delivery with the standardwebhooks npm
/// package's own Webhook.verify (tests/js). Fails, never skips, without node.
std::string npm_verifies(const std::string& secret, const test::received_callback& r) {
  BOOST_REQUIRE_MESSAGE(std::system("node --version > /dev/null 2>&1") == 0,
                        "node is required (scripts/install-deps.sh installs it)");
  std::string headers = "{\"webhook-id\": " + json::quote(r.header("webhook-id")) +
                        ", \"webhook-timestamp\": " + json::quote(r.header("webhook-timestamp")) +
                        ", \"webhook-signature\": " + json::quote(r.header("webhook-signature")) +
                        "}";
  auto hfile = temp_file("headers", headers);
  auto bfile = temp_file("body", r.body);
  auto out = temp_file("node-out", "");
  auto cmd = "node " + std::string(MG_SOURCE_DIR) + "/tests/js/verify_standard_webhook.js '" +
             secret + "' " + hfile + " " + bfile + " > " + out + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream in(out);
  std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (auto& f : {hfile, bfile, out})
    std::remove(f.c_str());
  return rc == 0 ? "valid" : said;
}

/// Drives one row through `attempts` failing passes, checking each backoff.
void check_backoff_until_dlq(callback_fixture& f, const std::string& row, int max_attempts) {
  for (int a = 1; a <= max_attempts; ++a) {
    double t0 = std::stod(f.scalar("SELECT extract(epoch FROM clock_timestamp())"));
    BOOST_TEST(f.pass().processed == 1);
    BOOST_TEST(std::stoi(f.col(row, "attempts")) == a);
    if (a < max_attempts) {
      BOOST_TEST(f.col(row, "status") == "pending");
      double next = std::stod(f.col(row, "extract(epoch FROM next_attempt_at)"));
      double expected = std::pow(2.0, std::min(a, 6));
      BOOST_TEST_CONTEXT("attempt " << a) {
        BOOST_TEST(std::abs((next - t0) - expected) < 1.0, "backoff " << next - t0);
      }
      // Not due yet: a pass leaves it alone.
      BOOST_TEST(f.pass().processed == 0);
      f.make_due(row);
    } else {
      BOOST_TEST(f.col(row, "status") == "dlq");
      BOOST_TEST(f.col(row, "last_error") == "HTTP 500");
      f.make_due(row);
      BOOST_TEST(f.pass().processed == 0); // dlq rows are never picked up
    }
  }
}

/// Runs a README example (tests/examples) on a delivery: 0 = valid.
int run_example(const std::string& runner, const std::string& file, const std::string& secret,
                const test::received_callback& r) {
  std::string headers = "{";
  for (auto& [k, v] : r.headers)
    headers += (headers.size() > 1 ? ", " : "") + json::quote(k) + ": " + json::quote(v);
  headers += "}";
  auto hfile = temp_file("ex-headers", headers);
  auto bfile = temp_file("ex-body", r.body);
  auto cmd = runner + " " + std::string(MG_SOURCE_DIR) + "/tests/examples/" + file + " '" + secret +
             "' " + hfile + " " + bfile + " > /dev/null";
  int rc = std::system(cmd.c_str());
  std::remove(hfile.c_str());
  std::remove(bfile.c_str());
  return rc;
}

http::admin_route route(std::vector<http::admin_route>& routes, const std::string& method) {
  for (auto& r : routes)
    if (r.method == method)
      return r;
  throw std::runtime_error("no route");
}

} // namespace

BOOST_AUTO_TEST_SUITE(callback_dispatcher)

BOOST_FIXTURE_TEST_CASE(backoff_schedule_with_max_attempts_8, callback_fixture) {
  test::callback_receiver receiver(100);
  auto row = outbox_row(receiver.url());
  exec("UPDATE movement_callback_outbox SET max_attempts = 8");
  // 2, 4, 8, 16, 32, 64, 64 s, then dlq on the 8th failure.
  check_backoff_until_dlq(*this, row, 8);
  BOOST_TEST(receiver.count() == 8u);
}

BOOST_FIXTURE_TEST_CASE(dlq_after_default_max_attempts, callback_fixture) {
  test::callback_receiver receiver(100);
  auto row = outbox_row(receiver.url());
  BOOST_TEST(col(row, "max_attempts") == "5"); // MG_CALLBACK_MAX_ATTEMPTS default
  check_backoff_until_dlq(*this, row, 5);
  BOOST_TEST(receiver.count() == 5u);
}

BOOST_FIXTURE_TEST_CASE(configured_max_attempts_reaches_the_outbox, callback_fixture) {
  test::callback_receiver receiver(100);
  settings.callback_max_attempts = 8;
  apply_settings();
  auto id = create("cb_one", "{}", receiver.url());
  exec("UPDATE movement_callback_outbox SET status = 'sent'"); // only the approval's rows below
  approve(id);
  BOOST_TEST(count("SELECT count(*) FROM movement_callback_outbox WHERE status = 'pending'") > 0);
  BOOST_TEST(count("SELECT count(*) FROM movement_callback_outbox WHERE status = 'pending'"
                   " AND max_attempts <> 8") == 0);
}

BOOST_FIXTURE_TEST_CASE(retries_are_byte_identical_and_verify_with_python, callback_fixture) {
  test::callback_receiver receiver(2);
  auto row = outbox_row(receiver.url());
  for (int i = 0; i < 3; ++i) {
    pass();
    make_due(row);
  }
  BOOST_TEST(col(row, "status") == "sent");
  BOOST_TEST(col(row, "attempts") == "3"); // the successful attempt counts too
  BOOST_TEST(col(row, "sent_at") != "");
  auto got = receiver.received();
  BOOST_REQUIRE(got.size() == 3u);
  for (auto& r : got) {
    BOOST_TEST(r.body == got[0].body);
    BOOST_TEST(r.header("X-QTG-Callback-Timestamp") == got[0].header("X-QTG-Callback-Timestamp"));
    BOOST_TEST(r.header("X-QTG-Callback-Nonce") == got[0].header("X-QTG-Callback-Nonce"));
    BOOST_TEST(r.header("X-QTG-Callback-Signature") == got[0].header("X-QTG-Callback-Signature"));
    BOOST_TEST(r.header("X-QTG-Callback-Signature-Version") == "v3");
    BOOST_TEST(r.header("Content-Type") == "application/json");
    BOOST_TEST(python_verifies_v3(v3_secret, r));
  }
  BOOST_TEST(got[0].header("X-QTG-Callback-Timestamp") == col(row, "callback_timestamp"));
  BOOST_TEST(got[0].header("X-QTG-Callback-Nonce") == col(row, "callback_nonce"));
  BOOST_TEST(!python_verifies_v3("another-secret", got[0]));
  // The body is the stored event: its event_id is the outbox row's.
  auto doc = json::parse_trusted(got[0].body, "callback body");
  BOOST_TEST(json::get_string(doc, "event_id") == col(row, "event_id"));
  BOOST_TEST(json::get_string(doc, "event_type") == "request_created");
}

BOOST_FIXTURE_TEST_CASE(readme_examples_verify_a_real_delivery, callback_fixture) {
  BOOST_REQUIRE_MESSAGE(std::system("node --version > /dev/null 2>&1") == 0, "node is required");
  test::callback_receiver receiver;
  outbox_row(receiver.url());
  pass();
  auto got = receiver.received();
  BOOST_REQUIRE(got.size() == 1u);
  BOOST_TEST(run_example("python3", "callback_verify.py", v3_secret, got[0]) == 0);
  BOOST_TEST(run_example("node", "callback_verify.js", v3_secret, got[0]) == 0);
  BOOST_TEST(run_example("python3", "callback_verify.py", "wrong", got[0]) != 0);
  BOOST_TEST(run_example("node", "callback_verify.js", "wrong", got[0]) != 0);
  auto tampered = got[0];
  tampered.body.insert(1, " ");
  BOOST_TEST(run_example("python3", "callback_verify.py", v3_secret, tampered) != 0);
  BOOST_TEST(run_example("node", "callback_verify.js", v3_secret, tampered) != 0);
}

BOOST_FIXTURE_TEST_CASE(standard_webhooks_verified_by_the_npm_package, callback_fixture) {
  settings.callback_signature_scheme = "standard-webhooks";
  settings.callback_secret = whsec_secret;
  test::callback_receiver receiver(1);
  auto row = outbox_row(receiver.url());
  pass();
  make_due(row);
  pass();
  BOOST_TEST(col(row, "status") == "sent");
  auto got = receiver.received();
  BOOST_REQUIRE(got.size() == 2u);
  for (auto& r : got) {
    BOOST_TEST(r.header("webhook-id") == col(row, "event_id")); // the same on every attempt
    BOOST_TEST(r.header("X-QTG-Callback-Signature") == "");
    BOOST_TEST(npm_verifies(whsec_secret, r) == "valid");
  }
  // The package refuses a tampered body and another key.
  auto tampered = got[1];
  tampered.body += " ";
  BOOST_TEST(npm_verifies(whsec_secret, tampered) != "valid");
  BOOST_TEST(npm_verifies("whsec_QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB", got[1]) != "valid");
}

BOOST_FIXTURE_TEST_CASE(rows_backing_off_do_not_hide_a_due_row, callback_fixture) {
  test::callback_receiver receiver;
  std::vector<std::string> waiting;
  for (int i = 0; i < 6; ++i)
    waiting.push_back(outbox_row(receiver.url()));
  exec("UPDATE movement_callback_outbox SET attempts = 1,"
       " next_attempt_at = now() + interval '60 seconds'");
  auto due = outbox_row(receiver.url()); // the newest row, behind six older ones
  auto r = pass();
  BOOST_TEST(r.processed == 1);
  BOOST_TEST(col(due, "status") == "sent");
  BOOST_TEST(count("SELECT count(*) FROM movement_callback_outbox WHERE status = 'pending'") == 6);
  BOOST_TEST(receiver.count() == 1u);
}

BOOST_FIXTURE_TEST_CASE(two_dispatchers_never_send_a_row_twice, callback_fixture) {
  test::callback_receiver receiver(0, 200ms); // slow enough for the passes to overlap
  for (int i = 0; i < 10; ++i)
    outbox_row(receiver.url());
  db::connection_slot second(url);
  workers::pass_result a, b;
  std::thread t1([&] { a = workers::callback_dispatch_pass(conn, settings); });
  std::thread t2([&] { b = workers::callback_dispatch_pass(second, settings); });
  t1.join();
  t2.join();
  BOOST_TEST(a.processed + b.processed == 10); // 5 each: SKIP LOCKED, then leased
  std::multiset<std::string> ids;
  for (auto& r : receiver.received())
    ids.insert(r.header("X-QTG-Callback-Nonce"));
  BOOST_TEST(ids.size() == 10u);
  BOOST_TEST(std::set<std::string>(ids.begin(), ids.end()).size() == 10u);
  BOOST_TEST(count("SELECT count(*) FROM movement_callback_outbox WHERE status = 'sent'"
                   " AND attempts = 1") == 10);
}

BOOST_FIXTURE_TEST_CASE(a_pass_sends_the_five_oldest_rows_first, callback_fixture) {
  test::callback_receiver receiver;
  std::vector<std::string> rows;
  for (int i = 0; i < 7; ++i)
    rows.push_back(outbox_row(receiver.url()));
  // created_at against insertion order: the last row written is the oldest,
  // so neither id nor insertion order can pass for FIFO.
  for (int i = 0; i < 7; ++i)
    exec("UPDATE movement_callback_outbox SET created_at = now() - interval '" +
         std::to_string(i + 1) + " minutes' WHERE id = '" + rows[i] + "'");
  BOOST_TEST(settings.callback_batch_size == 5); // the reference's LIMIT 5
  BOOST_TEST(pass().processed == 5);
  for (int i = 0; i < 7; ++i)
    BOOST_TEST_CONTEXT("row " << i) {
      BOOST_TEST(col(rows[i], "status") == (i >= 2 ? "sent" : "pending"));
    }
  // The receiver got exactly the five oldest events (sent concurrently, so
  // their arrival order is not the claim order).
  auto got = receiver.received();
  BOOST_REQUIRE(got.size() == 5u);
  std::vector<std::string> want;
  for (int i = 6; i >= 2; --i)
    want.push_back(col(rows[i], "event_id"));
  std::set<std::string> sent_ids, want_ids(want.begin(), want.end());
  for (auto& r : got)
    sent_ids.insert(json::parse_trusted(r.body, "callback")["event_id"].GetString());
  BOOST_TEST(sent_ids == want_ids);
}

BOOST_FIXTURE_TEST_CASE(without_a_secret_nothing_is_claimed_or_sent, callback_fixture) {
  test::callback_receiver receiver;
  auto row = outbox_row(receiver.url());
  settings.callback_secret.clear();
  auto r = pass();
  BOOST_TEST(r.processed == 0);
  BOOST_TEST(r.standing_problem.find("MG_CALLBACK_SECRET") != std::string::npos);
  BOOST_TEST(receiver.count() == 0u);
  BOOST_TEST(col(row, "status") == "pending");
  BOOST_TEST(col(row, "attempts") == "0");
  BOOST_TEST(col(row, "next_attempt_at IS NULL") == "t"); // not leased either
}

BOOST_FIXTURE_TEST_CASE(batch_is_sent_concurrently, callback_fixture) {
  test::callback_receiver receiver(0, 600ms);
  for (int i = 0; i < 5; ++i)
    outbox_row(receiver.url());
  auto started = std::chrono::steady_clock::now();
  BOOST_TEST(pass().processed == 5);
  auto took = std::chrono::steady_clock::now() - started;
  BOOST_CHECK(took < 2000ms); // serially it would be 3 s
  BOOST_TEST(count("SELECT count(*) FROM movement_callback_outbox WHERE status = 'sent'") == 5);
}

BOOST_FIXTURE_TEST_CASE(slow_receiver_times_out_within_the_bound, callback_fixture) {
  settings.callback_timeout_seconds = 1;
  test::callback_receiver receiver(0, 3000ms);
  auto row = outbox_row(receiver.url());
  auto started = std::chrono::steady_clock::now();
  pass();
  auto took = std::chrono::steady_clock::now() - started;
  BOOST_CHECK(took < 2600ms);
  BOOST_TEST(col(row, "status") == "pending");
  BOOST_TEST(col(row, "attempts") == "1");
  BOOST_TEST(col(row, "last_error").find("timeout") != std::string::npos, col(row, "last_error"));
  // No transaction stays open and no row stays locked while sending.
  BOOST_TEST(count("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                   " AND state = 'idle in transaction'") == 0);
}

BOOST_FIXTURE_TEST_CASE(no_lock_is_held_while_a_receiver_is_slow, callback_fixture) {
  settings.callback_timeout_seconds = 3;
  test::callback_receiver receiver(0, 1500ms);
  auto row = outbox_row(receiver.url());
  std::thread sender([&] { pass(); });
  BOOST_REQUIRE(wait_for("SELECT next_attempt_at > now() FROM movement_callback_outbox", 2000ms));
  std::this_thread::sleep_for(300ms); // the HTTP call is in flight now
  BOOST_TEST(test::lock_is_free(url, "SELECT 1 FROM movement_callback_outbox WHERE id = '" + row +
                                         "' FOR UPDATE NOWAIT"));
  sender.join();
  BOOST_TEST(col(row, "status") == "sent");
}

BOOST_FIXTURE_TEST_CASE(a_crash_after_the_claim_loses_nothing, callback_fixture) {
  test::callback_receiver receiver;
  auto row = outbox_row(receiver.url());
  // A dispatcher claims and dies before sending: the lease hides the row…
  auto claimed = db::claim_due_callbacks(*other, settings.network_class, 5, 40);
  BOOST_REQUIRE(claimed.size() == 1u);
  BOOST_TEST(pass().processed == 0);
  BOOST_TEST(col(row, "status") == "pending");
  // …until it runs out; then the row goes out, and the dead claim's late
  // outcome changes nothing.
  make_due(row);
  BOOST_TEST(pass().processed == 1);
  BOOST_TEST(col(row, "status") == "sent");
  db::callback_outcome late{claimed[0].id, claimed[0].lease, false, "late"};
  BOOST_TEST(db::record_callback_outcomes(*other, {late}) == 0);
  BOOST_TEST(col(row, "status") == "sent");
  BOOST_TEST(col(row, "attempts") == "1");
}

BOOST_FIXTURE_TEST_CASE(other_network_classes_are_left_alone, callback_fixture) {
  test::callback_receiver receiver;
  auto row = outbox_row(receiver.url());
  exec("UPDATE movement_requests SET network_class = 'mainnet'");
  BOOST_TEST(pass().processed == 0);
  settings.network_class = "mainnet";
  BOOST_TEST(pass().processed == 1);
  BOOST_TEST(col(row, "status") == "sent");
}

BOOST_FIXTURE_TEST_CASE(a_committed_row_notifies_mg_callback, callback_fixture) {
  auto listener = db::connect(url);
  struct counter : pqxx::notification_receiver {
    counter(pqxx::connection& c) : pqxx::notification_receiver(c, db::callback_channel) {}
    void operator()(const std::string&, int) override { ++n; }
    int n = 0;
  } heard(*listener);
  create("cb_one"); // no callback_url: no outbox row, no NOTIFY
  listener->await_notification(0, 300000);
  BOOST_TEST(heard.n == 0);
  create("cb_one", "{}", "http://127.0.0.1:9/hook");
  listener->await_notification(2, 0);
  BOOST_TEST(heard.n == 1);
}

BOOST_FIXTURE_TEST_CASE(wakeup_sends_at_once_instead_of_after_the_interval, callback_fixture) {
  test::callback_receiver receiver;
  settings.wakeups_enabled = true;
  settings.callback_dispatch_interval_seconds = 60;
  workers::callback_dispatcher dispatcher(settings);
  for (int i = 0; i < 3; ++i) // the start pass, then listening
    dispatcher.pass(conn);
  auto row = outbox_row(receiver.url());
  auto started = std::chrono::steady_clock::now();
  while (col(row, "status") != "sent" && std::chrono::steady_clock::now() - started < 5s)
    dispatcher.pass(conn);
  BOOST_TEST(col(row, "status") == "sent");
  BOOST_CHECK(std::chrono::steady_clock::now() - started < 2s);
}

BOOST_FIXTURE_TEST_CASE(pure_polling_waits_for_the_interval_without_wakeups, callback_fixture) {
  test::callback_receiver receiver;
  settings.wakeups_enabled = false;
  workers::callback_dispatcher dispatcher(settings);
  BOOST_TEST(dispatcher.pass(conn).processed == 0);
  auto row = outbox_row(receiver.url());
  // Each pass is one batch; the loop runner's interval spaces them.
  auto r = dispatcher.pass(conn);
  BOOST_TEST(r.processed == 1);
  BOOST_TEST(!r.next_due_in_seconds.has_value());
  BOOST_TEST(col(row, "status") == "sent");
}

BOOST_FIXTURE_TEST_CASE(admin_lists_and_redelivers, callback_fixture) {
  test::callback_receiver receiver(100);
  std::vector<std::string> rows;
  for (int i = 0; i < 3; ++i)
    rows.push_back(outbox_row(receiver.url()));
  exec("UPDATE movement_callback_outbox SET max_attempts = 1");
  pass(); // all three fail once → dlq
  BOOST_TEST(count("SELECT count(*) FROM movement_callback_outbox WHERE status = 'dlq'") == 3);
  auto first_nonce = col(rows[0], "callback_nonce");
  auto first_event = col(rows[0], "event_id");

  db::connection_pool pool(url, 2);
  services::service_context services{pool, settings, ctx->plans, {}, nullptr};
  auto routes = http::callback_admin_routes(services);
  auto list = route(routes, "GET");
  auto redeliver = route(routes, "POST");

  http::admin_request q;
  q.query = {{"status", "dlq"}, {"limit", "2"}};
  auto page1 = list.handle(q);
  BOOST_TEST(page1.status == 200);
  auto d1 = json::parse_trusted(page1.body, "page");
  BOOST_REQUIRE(d1["items"].Size() == 2u);
  BOOST_TEST(json::get_string(d1["items"][0], "id") == rows[0]);
  BOOST_TEST(json::get_string(d1["items"][0], "status") == "dlq");
  BOOST_TEST(d1["items"][0]["attempts"].GetInt() == 1);
  BOOST_TEST(json::get_string(d1["items"][0], "last_error") == "HTTP 500");
  BOOST_TEST(json::get_string(d1["items"][0], "event_id") == first_event);
  BOOST_REQUIRE(d1["next_cursor"].IsString());
  q.query = {{"status", "dlq"}, {"limit", "2"}, {"cursor", d1["next_cursor"].GetString()}};
  auto d2 = json::parse_trusted(list.handle(q).body, "page");
  BOOST_REQUIRE(d2["items"].Size() == 1u);
  BOOST_TEST(json::get_string(d2["items"][0], "id") == rows[2]);
  BOOST_TEST(d2["next_cursor"].IsNull());
  q.query = {{"status", "sent"}};
  BOOST_TEST(json::parse_trusted(list.handle(q).body, "page")["items"].Size() == 0u);
  q.query = {{"status", "nope"}};
  BOOST_TEST(list.handle(q).status == 400);
  q.query = {{"limit", "0"}};
  BOOST_TEST(list.handle(q).status == 400);
  q.query = {{"cursor", "not-a-uuid"}};
  BOOST_TEST(list.handle(q).status == 400);

  http::admin_request r;
  r.params = {rows[0]};
  auto done = redeliver.handle(r);
  BOOST_TEST(done.status == 200);
  auto row = json::parse_trusted(done.body, "row");
  BOOST_TEST(json::get_string(row, "status") == "pending");
  BOOST_TEST(row["attempts"].GetInt() == 0);
  BOOST_TEST(json::get_string(row, "event_id") == first_event);
  BOOST_TEST(col(rows[0], "callback_nonce") == first_nonce);
  BOOST_TEST(col(rows[0], "next_attempt_at") == "");
  BOOST_TEST(count("SELECT count(*) FROM audit_outbox WHERE action = 'callback.redeliver'"
                   " AND subject = '" +
                   rows[0] + "'") == 1);
  BOOST_TEST(redeliver.handle(r).status == 409); // already pending
  r.params = {"9b2f3c1e-0000-4000-8000-000000000000"};
  BOOST_TEST(redeliver.handle(r).status == 404);
  r.params = {"not-a-uuid"};
  BOOST_TEST(redeliver.handle(r).status == 404);

  // The redelivered row goes out again with the same event id and nonce.
  exec("UPDATE movement_callback_outbox SET max_attempts = 5");
  pass();
  auto got = receiver.received();
  BOOST_REQUIRE(got.size() == 4u);
  BOOST_TEST(got[3].header("X-QTG-Callback-Nonce") == first_nonce);
  for (int i = 0; i < 3; ++i) // the batch went out concurrently: find the first delivery
    if (got[i].header("X-QTG-Callback-Nonce") == first_nonce)
      BOOST_TEST(got[3].body == got[i].body);
}

namespace {

/// A receiver on 127.0.0.1 whose answer is hostile: `kind` is "huge" (a
/// 200 OK streaming 100 MiB), "trickle" (a 200 OK whose body comes a byte
/// per 200 ms, for ever) or "redirect" (302 to `location`).
struct hostile_receiver {
  httplib::Server server;
  std::thread thread;
  std::atomic<int> hits{0};
  std::atomic<bool> stopping{false};
  int port = 0;
  hostile_receiver(const std::string& kind, const std::string& location = "") {
    server.Post(".*", [this, kind, location](const httplib::Request&, httplib::Response& res) {
      ++hits;
      if (kind == "redirect") {
        res.status = 302;
        res.set_header("Location", location);
        return;
      }
      auto sent = std::make_shared<size_t>(0);
      res.set_chunked_content_provider("application/json",
                                       [this, kind, sent](size_t, httplib::DataSink& sink) {
                                         if (stopping || *sent >= 100u * 1024 * 1024)
                                           return false;
                                         if (kind == "trickle") {
                                           std::this_thread::sleep_for(200ms);
                                           *sent += 1;
                                           return sink.write(" ", 1);
                                         }
                                         static const std::string block(64 * 1024, ' ');
                                         *sent += block.size();
                                         return sink.write(block.data(), block.size());
                                       });
    });
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running())
      std::this_thread::sleep_for(1ms);
  }
  ~hostile_receiver() {
    stopping = true;
    server.stop();
    thread.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port) + "/hook"; }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(a_huge_answer_is_cut_at_the_cap_and_the_attempt_fails, callback_fixture) {
  hostile_receiver receiver("huge");
  auto row = outbox_row(receiver.url());
  pass();
  BOOST_TEST(receiver.hits == 1);
  BOOST_TEST(col(row, "status") == "pending");
  BOOST_TEST(col(row, "attempts") == "1");
  BOOST_TEST(col(row, "last_error").find("answer over") != std::string::npos,
             col(row, "last_error"));
}

BOOST_FIXTURE_TEST_CASE(a_trickled_answer_is_cut_at_the_deadline, callback_fixture) {
  settings.callback_timeout_seconds = 1;
  hostile_receiver receiver("trickle");
  auto row = outbox_row(receiver.url());
  auto started = std::chrono::steady_clock::now();
  pass();
  auto took = std::chrono::steady_clock::now() - started;
  BOOST_CHECK(took < 4000ms); // deadline 2.5 s; each byte resets the read timeout
  BOOST_TEST(col(row, "status") == "pending");
  BOOST_TEST(col(row, "last_error").find("timeout") != std::string::npos, col(row, "last_error"));
}

BOOST_FIXTURE_TEST_CASE(no_redirect_is_followed, callback_fixture) {
  test::callback_receiver target;
  hostile_receiver receiver("redirect", target.url());
  auto row = outbox_row(receiver.url());
  pass();
  BOOST_TEST(receiver.hits == 1);
  BOOST_TEST(target.count() == 0u);
  BOOST_TEST(col(row, "last_error") == "HTTP 302");
}

BOOST_FIXTURE_TEST_CASE(a_name_resolving_to_loopback_is_refused_at_delivery, callback_fixture) {
  settings.callback_allow_private = false;
  test::callback_receiver receiver;
  // Accepted at create (a public-looking name); at delivery it resolves to 127.0.0.1.
  auto row = outbox_row("http://callbacks.example:" + std::to_string(receiver.port()) + "/hook");
  auto options = workers::delivery_options(settings);
  std::vector<std::string> asked;
  options.resolve = [&](const std::string& host) {
    asked.push_back(host);
    return std::vector<std::string>{"93.184.216.34", "127.0.0.1"}; // one bad address is enough
  };
  workers::callback_dispatch_pass(conn, settings, options);
  BOOST_TEST(asked == std::vector<std::string>{"callbacks.example"});
  BOOST_TEST(receiver.count() == 0u);
  BOOST_TEST(col(row, "status") == "pending");
  BOOST_TEST(col(row, "attempts") == "1");
  BOOST_TEST(col(row, "last_error") == "refused address");
}

BOOST_FIXTURE_TEST_CASE(localhost_is_refused_at_delivery_by_the_system_resolver, callback_fixture) {
  settings.callback_allow_private = false;
  test::callback_receiver receiver;
  auto row = outbox_row("http://localhost:" + std::to_string(receiver.port()) + "/hook");
  pass();
  BOOST_TEST(receiver.count() == 0u);
  BOOST_TEST(col(row, "last_error") == "refused address");
}

BOOST_FIXTURE_TEST_CASE(a_private_literal_stored_before_the_check_is_refused, callback_fixture) {
  settings.callback_allow_private = false;
  test::callback_receiver receiver;
  auto row = outbox_row("http://[::ffff:127.0.0.1]:" + std::to_string(receiver.port()) + "/hook");
  pass();
  BOOST_TEST(receiver.count() == 0u);
  BOOST_TEST(col(row, "last_error") == "refused address");
}

BOOST_FIXTURE_TEST_CASE(delivery_connects_to_the_address_that_was_resolved, callback_fixture) {
  // Allowed private: the name (unknown to DNS) goes where the resolver said.
  test::callback_receiver receiver;
  auto row = outbox_row("http://pinned.invalid:" + std::to_string(receiver.port()) + "/hook");
  auto options = workers::delivery_options(settings);
  options.resolve = [](const std::string&) {
    return std::vector<std::string>{"127.0.0.1"};
  };
  workers::callback_dispatch_pass(conn, settings, options);
  BOOST_TEST(receiver.count() == 1u);
  BOOST_TEST(col(row, "status") == "sent", col(row, "last_error"));
}

BOOST_AUTO_TEST_SUITE_END()
