// balance_snapshot against a real local gateway HTTP server: a pass appends
// the gateway's balance, a failing venue rolls back only itself, every kind
// of bad answer (status, JSON, types, timeout, refused) is logged, counted
// and leaves nothing behind, retention deletes only old rows, the stale
// flag flips at the threshold; the worker starts only under its flag and
// URL, runs in the sidecar group with its heartbeat, and a crashing pass is
// restarted while the runtime goes on.
#include <boost/test/unit_test.hpp>

#include <httplib.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "actors/workers/balance_snapshot.hpp"
#include "actors/workers/worker_table.hpp"
#include "config/metrics.hpp"
#include "executors/balance_fetchers.hpp"
#include "persistence/balance_store.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/http_peer.hpp"
#include "tests/support/runtime_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

/// A real gateway API on 127.0.0.1: answers GET /v1/balances/unified with
/// the status and body set last, after `delay`.
class local_gateway {
public:
  local_gateway() {
    server_.Get("/v1/balances/unified", [this](const httplib::Request&, httplib::Response& res) {
      std::chrono::milliseconds delay;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        res.status = status_;
        res.set_content(body_, "application/json");
        delay = delay_;
      }
      ++calls;
      std::this_thread::sleep_for(delay);
    });
    port_ = test::listen_in_background(server_, thread_);
  }
  ~local_gateway() { test::stop_listening(server_, thread_); }
  void answer(int status, std::string body, std::chrono::milliseconds delay = 0ms) {
    std::lock_guard<std::mutex> lock(mutex_);
    status_ = status;
    body_ = std::move(body);
    delay_ = delay;
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  std::atomic<int> calls{0};

private:
  httplib::Server server_;
  std::mutex mutex_;
  int status_ = 200;
  std::string body_ = R"({"asset": "USDC", "amount": "1234.500000"})";
  std::chrono::milliseconds delay_{0};
  int port_ = 0;
  std::thread thread_;
};

std::shared_ptr<domain::balance_fetcher>
gateway_fetcher(const std::string& url, const std::string& venue = "gateway", double timeout = 2) {
  return std::make_shared<executors::gateway_balance_fetcher>(url, timeout, venue);
}

/// A multi-asset venue (none speaks HTTP yet): reports what it is given,
/// e.g. a second row the database refuses, to show a venue's rows go
/// together or not at all.
struct listed_venue : domain::balance_fetcher {
  std::string key;
  std::vector<domain::balance_amount> rows;
  listed_venue(std::string k, std::vector<domain::balance_amount> r)
      : key(std::move(k)), rows(std::move(r)) {}
  const std::string& venue_key() const override { return key; }
  std::vector<domain::balance_amount> fetch() override { return rows; }
};

/// A venue adapter failing outside std::exception (a bug, not a bad
/// answer): the pass is not meant to survive it, the supervisor is.
struct crashing_venue : domain::balance_fetcher {
  std::shared_ptr<std::atomic<int>> calls;
  std::string key = "crashy";
  explicit crashing_venue(std::shared_ptr<std::atomic<int>> c) : calls(std::move(c)) {}
  const std::string& venue_key() const override { return key; }
  std::vector<domain::balance_amount> fetch() override {
    if (++*calls % 2 == 0)
      throw 42;
    return {{"USDC", std::to_string(calls->load())}};
  }
};

double failures(const std::string& venue) {
  return metrics::registry::global()
      .get_counter("movegate_balance_fetch_failures_total", "", {{"venue", venue}})
      .value();
}

std::string snapshot_rows(test::db_fixture& f) {
  return f.scalar("SELECT coalesce(string_agg(venue_key || ':' || asset || ':' || amount::text,"
                  " ',' ORDER BY venue_key, asset, id), '') FROM balance_snapshots");
}

} // namespace

BOOST_AUTO_TEST_SUITE(balance_snapshot)

BOOST_FIXTURE_TEST_CASE(pass_appends_the_gateway_balance, test::db_fixture) {
  local_gateway gw;
  settings.gateway_api_url = gw.url();
  auto fetchers = executors::make_balance_fetchers(settings);
  BOOST_REQUIRE(fetchers.size() == 1u);
  BOOST_TEST(fetchers[0]->venue_key() == "gateway");
  auto r = workers::balance_snapshot_pass(conn, fetchers, 30, 120);
  BOOST_TEST(r.processed == 1);
  BOOST_TEST(snapshot_rows(*this) == "gateway:USDC:1234.500000");
  // Append-only: the next pass adds a row, it never overwrites.
  gw.answer(200, R"({"asset": "USDC", "amount": "99", "as_of": "ignored"})");
  workers::balance_snapshot_pass(conn, fetchers, 30, 120);
  BOOST_TEST(snapshot_rows(*this) == "gateway:USDC:1234.500000,gateway:USDC:99");
  BOOST_TEST(count("SELECT count(*) FROM balance_snapshots WHERE fetched_at <= now()") == 2);
}

BOOST_FIXTURE_TEST_CASE(failing_venue_rolls_back_only_itself, test::db_fixture) {
  local_gateway good, broken;
  broken.answer(500, R"({"error": "down"})");
  double before = failures("broken");
  double before_half = failures("half");
  domain::balance_fetcher_registry fetchers{
      gateway_fetcher(broken.url(), "broken"),
      // Its second row breaks a CHECK: its first row must go too.
      std::make_shared<listed_venue>("half",
                                     std::vector<domain::balance_amount>{{"USDC", "5"}, {"", "6"}}),
      gateway_fetcher(good.url(), "good"),
  };
  auto r = workers::balance_snapshot_pass(conn, fetchers, 30, 120);
  BOOST_TEST(r.processed == 1);
  BOOST_TEST(snapshot_rows(*this) == "good:USDC:1234.500000");
  BOOST_TEST(failures("broken") == before + 1);
  BOOST_TEST(failures("half") == before_half + 1);

  // The same outcome through the functions the API shares, with the reasons.
  auto fetches = services::fetch_all_balances(fetchers);
  pqxx::work tx(conn.get());
  BOOST_TEST(services::store_balance_fetches(tx, fetches) == 1);
  tx.commit();
  BOOST_REQUIRE(fetches.size() == 3u);
  BOOST_TEST(fetches[0].error == "HTTP 500");
  BOOST_TEST(fetches[1].error.rfind("not stored: ", 0) == 0);
  BOOST_TEST(fetches[2].error == "");
}

BOOST_FIXTURE_TEST_CASE(bad_gateway_answers_write_nothing_and_fail_the_pass, test::db_fixture) {
  local_gateway gw;
  struct bad_answer {
    int status;
    std::string body;
    std::chrono::milliseconds delay;
    std::string error; // expected start of the venue's error
  };
  const bad_answer cases[] = {
      {500, R"({"asset": "USDC", "amount": "1"})", 0ms, "HTTP 500"},
      {404, "not found", 0ms, "HTTP 404"},
      {200, "{not json", 0ms, "reply is not JSON"},
      {200, R"(["USDC", "1"])", 0ms, "reply is not a JSON object"},
      {200, R"({"asset": "USDC", "amount": 1.5})", 0ms, "'amount' is not a string"},
      {200, R"({"asset": "USDC"})", 0ms, "reply has no 'amount'"},
      {200, R"({"asset": 7, "amount": "1"})", 0ms, "'asset' is not a string"},
      {200, R"({"asset": "USDC", "amount": "-5"})", 0ms, "amount is not a decimal string"},
      {200, R"({"asset": "USDC", "amount": "1e6"})", 0ms, "amount is not a decimal string"},
      {200, R"({"asset": "USDC", "amount": ""})", 0ms, "amount is not a decimal string"},
      {200, R"({"asset": "USDT", "amount": "1"})", 0ms, "asset is 'USDT'"},
      {200, R"({"asset": "USDC", "amount": "1"})", 1500ms, "http://127.0.0.1"}, // timeout
  };
  auto fetchers = domain::balance_fetcher_registry{gateway_fetcher(gw.url(), "gateway", 0.5)};
  for (auto& c : cases) {
    gw.answer(c.status, c.body, c.delay);
    double before = failures("gateway");
    auto fetches = services::fetch_all_balances(fetchers);
    BOOST_REQUIRE(fetches.size() == 1u);
    BOOST_TEST(fetches[0].error.rfind(c.error, 0) == 0, c.body << " → " << fetches[0].error);
    BOOST_TEST(fetches[0].balances.empty());
    BOOST_TEST(failures("gateway") == before + 1);
    BOOST_CHECK_THROW(workers::balance_snapshot_pass(conn, fetchers, 30, 120), std::runtime_error);
    BOOST_TEST(count("SELECT count(*) FROM balance_snapshots") == 0, c.body);
  }
  // Nobody listening at all.
  auto refused = domain::balance_fetcher_registry{
      gateway_fetcher("http://127.0.0.1:" + std::to_string(1), "gateway", 0.5)};
  BOOST_CHECK_THROW(workers::balance_snapshot_pass(conn, refused, 30, 120), std::runtime_error);
  BOOST_TEST(count("SELECT count(*) FROM balance_snapshots") == 0);
}

BOOST_FIXTURE_TEST_CASE(retention_deletes_only_old_rows, test::db_fixture) {
  exec("INSERT INTO balance_snapshots (venue_key, asset, amount, fetched_at) VALUES"
       " ('gateway', 'USDC', 1, now() - interval '40 days'),"
       " ('gateway', 'USDC', 2, now() - interval '31 days'),"
       " ('gateway', 'USDC', 3, now() - interval '29 days'),"
       " ('gateway', 'USDC', 4, now() - interval '1 minute'),"
       // A venue that stopped answering: its newest row stays, as stale.
       " ('gone', 'USDC', 7, now() - interval '50 days'),"
       " ('gone', 'USDC', 8, now() - interval '45 days')");
  pqxx::work tx(conn.get());
  BOOST_TEST(db::delete_expired_snapshots(tx, 30) == 3);
  tx.commit();
  BOOST_TEST(snapshot_rows(*this) == "gateway:USDC:3,gateway:USDC:4,gone:USDC:8");

  // The worker pass applies its retention setting (here 1 day).
  local_gateway gw;
  auto r = workers::balance_snapshot_pass(conn, {gateway_fetcher(gw.url())}, 1, 120);
  BOOST_TEST(r.processed == 1 + 1); // one appended, "3" (29 days old) deleted
  BOOST_TEST(snapshot_rows(*this) == "gateway:USDC:4,gateway:USDC:1234.500000,gone:USDC:8");
}

BOOST_FIXTURE_TEST_CASE(latest_balance_and_stale_flag_flip_at_the_threshold, test::db_fixture) {
  exec("INSERT INTO balance_snapshots (venue_key, asset, amount, fetched_at) VALUES"
       " ('gateway', 'USDC', 10, now() - interval '5 minutes'),"
       " ('gateway', 'USDC', 11, now() - interval '90 seconds'),"
       " ('b_venue', 'EURC', 3, now() - interval '10 seconds'),"
       " ('b_venue', 'USDC', 4.25, now() - interval '10 minutes')");
  pqxx::read_transaction tx(conn.get());
  auto rows = db::latest_balances(tx, 120);
  BOOST_REQUIRE(rows.size() == 3u);
  BOOST_TEST(rows[0].venue_key + ":" + rows[0].asset + ":" + rows[0].amount == "b_venue:EURC:3");
  BOOST_TEST(rows[1].amount == "4.25");
  BOOST_TEST(rows[1].stale == true);
  BOOST_TEST(rows[2].venue_key + ":" + rows[2].amount == "gateway:11");
  BOOST_TEST(rows[2].stale == false); // 90 s < 120 s
  BOOST_TEST(rows[2].fetched_at.size() == std::string("2024-01-01T00:00:00.000000Z").size());
  // The same row read with a lower threshold is stale: computed at read time.
  BOOST_TEST(db::latest_balances(tx, 60)[2].stale == true);
  BOOST_TEST(db::latest_balances(tx, 60)[0].stale == false);
}

BOOST_FIXTURE_TEST_CASE(venue_failing_until_stale_notifies_once_per_episode, test::db_fixture) {
  local_gateway gw;
  auto fetchers = domain::balance_fetcher_registry{gateway_fetcher(gw.url())};
  auto notifications = [&] {
    return count("SELECT count(*) FROM notification_outbox WHERE kind = 'balance_stale'"
                 " AND subject = 'venue:gateway'");
  };
  workers::balance_snapshot_pass(conn, fetchers, 30, 120);
  gw.answer(500, "{}");
  // Failing while the last balance is still fresh: nothing to report yet.
  BOOST_CHECK_THROW(workers::balance_snapshot_pass(conn, fetchers, 30, 120), std::runtime_error);
  BOOST_TEST(notifications() == 0);
  // The balance ages past the threshold while the venue keeps failing: one
  // notification, however many passes fail.
  exec("UPDATE balance_snapshots SET fetched_at = fetched_at - interval '121 seconds'");
  for (int i = 0; i < 3; ++i)
    BOOST_CHECK_THROW(workers::balance_snapshot_pass(conn, fetchers, 30, 120), std::runtime_error);
  BOOST_TEST(notifications() == 1);
  auto payload = scalar("SELECT payload::text FROM notification_outbox");
  BOOST_TEST(payload.find("\"error\": \"HTTP 500\"") != std::string::npos, payload);
  BOOST_TEST(payload.find("\"venue_key\": \"gateway\"") != std::string::npos, payload);
  // It recovers, then goes stale again: a new episode, a new notification.
  gw.answer(200, R"({"asset": "USDC", "amount": "1"})");
  workers::balance_snapshot_pass(conn, fetchers, 30, 120);
  BOOST_TEST(notifications() == 1);
  gw.answer(500, "{}");
  exec("UPDATE balance_snapshots SET fetched_at = fetched_at - interval '121 seconds'");
  BOOST_CHECK_THROW(workers::balance_snapshot_pass(conn, fetchers, 30, 120), std::runtime_error);
  BOOST_TEST(notifications() == 2);
}

BOOST_FIXTURE_TEST_CASE(maker_needs_the_flag_and_the_gateway_url, test::db_fixture) {
  settings.gateway_api_url = "http://127.0.0.1:9";
  apply_settings();
  BOOST_TEST(!actors::make_worker("balance_snapshot", ctx)); // flag off (default)
  settings.balance_snapshot_enabled = true;
  settings.gateway_api_url = "";
  apply_settings();
  BOOST_TEST(!actors::make_worker("balance_snapshot", ctx)); // skipped: no URL
  settings.gateway_api_url = "ftp://gateway";
  apply_settings();
  BOOST_TEST(!actors::make_worker("balance_snapshot", ctx)); // skipped: not http(s)
  settings.gateway_api_url = "http://127.0.0.1:9";
  settings.balance_snapshot_interval_seconds = 7;
  apply_settings();
  auto spec = actors::make_worker("balance_snapshot", ctx);
  BOOST_REQUIRE(spec);
  BOOST_TEST(spec->name == "balance_snapshot");
  BOOST_TEST(std::string(to_string(spec->group)) == "sidecar");
  BOOST_TEST(spec->policy.interval_seconds == 7.0);
  BOOST_TEST(spec->policy.drain == false);
  // The runtime starts it: it is in the worker table.
  BOOST_TEST(actors::declared_worker("balance_snapshot").make == &actors::build_balance_snapshot);
}

BOOST_FIXTURE_TEST_CASE(runtime_runs_it_in_the_sidecar_group_with_a_heartbeat,
                        test::runtime_fixture) {
  local_gateway gw;
  settings.balance_snapshot_enabled = true;
  settings.gateway_api_url = gw.url();
  settings.balance_snapshot_interval_seconds = 0.1;
  apply_settings();
  start();
  BOOST_TEST(count("SELECT count(*) FROM worker_heartbeats WHERE worker_name = 'balance_snapshot'"
                   " AND worker_group = 'sidecar' AND runtime_node = 'test-node'") == 1);
  BOOST_TEST(eventually([&] { return count("SELECT count(*) FROM balance_snapshots") >= 3; }, 5s));
  BOOST_TEST(eventually(
      [&] {
        return count("SELECT count(*) FROM worker_heartbeats WHERE worker_name ="
                     " 'balance_snapshot' AND status = 'running' AND iterations >= 1"
                     " AND items_processed >= 1") == 1;
      },
      5s));
  // A failing gateway shows on the heartbeat and writes nothing.
  gw.answer(503, "{}");
  BOOST_TEST(eventually(
      [&] {
        return scalar("SELECT last_error FROM worker_heartbeats WHERE worker_name ="
                      " 'balance_snapshot'")
                   .find("gateway: HTTP 503") != std::string::npos;
      },
      5s));
  BOOST_TEST(stop() == 0);
}

BOOST_FIXTURE_TEST_CASE(crashing_pass_is_restarted_and_the_runtime_lives, test::runtime_fixture) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto spec = actors::spec_of(
      actors::declared_worker("balance_snapshot"), settings,
      actors::balance_snapshot_over(
          ctx, {std::make_shared<crashing_venue>(calls)})); // crashes on every 2nd pass
  spec.policy = domain::loop_policy{0.05, 0, false};
  start({spec});
  // Each incarnation stores one row, then crashes; restarts after 1 s, 2 s.
  BOOST_TEST(eventually([&] { return calls->load() >= 4; }, 8s));
  BOOST_TEST(count("SELECT count(*) FROM balance_snapshots WHERE venue_key = 'crashy'") >= 2);
  std::string status;
  (*self)
      ->request(rt->supervisor(), 5s, actors::status_atom::value)
      .receive([&](const std::string& s) { status = s; }, [&](caf::error&) {});
  BOOST_TEST(status.find("\"name\":\"balance_snapshot\",\"group\":\"sidecar\"") !=
             std::string::npos);
  // The core still moves money while the sidecar crashes.
  add_template(R"({"template_key": "one", "version": 1,
    "nodes": [{"node_key": "a", "action_type": "step"}], "edges": []})");
  auto id = approve_and_notify("one");
  BOOST_TEST(eventually(
      [&] { return snapshot(id).request_state == domain::request_state::completed; }, 10s));
  BOOST_TEST(stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
