// GET /v3/balances[?fresh=true] over real HTTP against `movegate serve`, with
// a real local gateway API started by the test: the latest row per venue
// with a stale flag that flips at MG_BALANCE_STALE_THRESHOLD_SECONDS,
// fresh=true appending a row, a failing gateway answered with the stored
// data and its error (503 when nothing is stored), bad query parameters and
// scope refused; the balance_snapshot worker in serve (sidecar heartbeat,
// rows appended) and its skip warning without a gateway URL.
#include <boost/test/unit_test.hpp>

#include <httplib.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "domain/json.hpp"
#include "tests/support/http_peer.hpp"
#include "tests/support/serve_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

using key = test::api_key_spec;
const key reader{"reader", "4ead004ead004ead004ead004ead0000", R"(["read"])"};
const key creator{"creator", "c0ffee00c0ffee00c0ffee00c0ffee00", R"(["create"])"};

/// A real gateway API on 127.0.0.1 (GET /v1/balances/unified).
class local_gateway {
public:
  local_gateway() {
    server_.Get("/v1/balances/unified", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mutex_);
      res.status = status_;
      res.set_content(body_, "application/json");
      ++calls;
    });
    port_ = test::listen_in_background(server_, thread_);
  }
  ~local_gateway() { test::stop_listening(server_, thread_); }
  void answer(int status, std::string body) {
    std::lock_guard<std::mutex> lock(mutex_);
    status_ = status;
    body_ = std::move(body);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  std::atomic<int> calls{0};

private:
  httplib::Server server_;
  std::mutex mutex_;
  int status_ = 200;
  std::string body_ = R"({"asset": "USDC", "amount": "250000.125000"})";
  int port_ = 0;
  std::thread thread_;
};

struct balances_fixture : test::serve_fixture {
  local_gateway gateway;
  balances_fixture() { keys = {reader, creator}; }

  /// serve with the gateway configured, the snapshot worker off (the API
  /// alone writes) and a 60 s stale threshold.
  void start_api(std::map<std::string, std::string> extra = {}) {
    extra.emplace("MG_GATEWAY_API_URL", gateway.url());
    extra.emplace("MG_BALANCE_STALE_THRESHOLD_SECONDS", "60");
    start("e2e", extra);
  }
  test::api_reply balances(const std::string& target = "/v3/balances") {
    return client(reader).get(target);
  }
};

json::document parse(const std::string& body) {
  auto doc = json::parse(body);
  BOOST_REQUIRE_MESSAGE(doc && doc->IsObject(), body);
  return std::move(*doc);
}

/// items[i].name as text.
std::string item(const json::document& d, size_t i, const char* name) {
  auto& items = d["items"];
  if (!items.IsArray() || i >= items.Size())
    return "<none>";
  auto& v = items[static_cast<rapidjson::SizeType>(i)][name];
  return v.IsString() ? v.GetString() : json::dump(v);
}

std::string error_code(const std::string& body) {
  auto doc = json::parse(body);
  if (!doc || !doc->IsObject() || !doc->HasMember("error"))
    return "";
  return json::get_string((*doc)["error"], "code");
}

} // namespace

BOOST_AUTO_TEST_SUITE(balances_api)

BOOST_FIXTURE_TEST_CASE(latest_snapshot_per_venue_with_a_stale_flag_that_flips, balances_fixture) {
  start_api();
  auto empty = balances();
  BOOST_TEST(empty.status == 200);
  BOOST_TEST(test::json_field(empty.body, "items") == "[]");
  exec("INSERT INTO balance_snapshots (venue_key, asset, amount, fetched_at) VALUES"
       " ('gateway', 'USDC', 100, now() - interval '10 minutes'),"
       " ('gateway', 'USDC', 200.50, now() - interval '30 seconds')");
  auto r = balances();
  BOOST_TEST(r.status == 200);
  auto d = parse(r.body);
  BOOST_REQUIRE(d["items"].Size() == 1u);
  BOOST_TEST(item(d, 0, "venue_key") == "gateway");
  BOOST_TEST(item(d, 0, "amount") == "200.50"); // a decimal string, as stored
  BOOST_TEST(item(d, 0, "stale") == "false");
  BOOST_TEST(d["stale_threshold_seconds"].GetDouble() == 60.0);
  BOOST_TEST(gateway.calls.load() == 0); // a plain read never calls the venue
  // Time passes (the row ages past 60 s): the same row now reads stale.
  exec("UPDATE balance_snapshots SET fetched_at = fetched_at - interval '40 seconds'");
  auto later = parse(balances().body);
  BOOST_TEST(item(later, 0, "amount") == "200.50");
  BOOST_TEST(item(later, 0, "stale") == "true");
}

BOOST_FIXTURE_TEST_CASE(fresh_true_fetches_and_appends_a_row, balances_fixture) {
  start_api();
  exec("INSERT INTO balance_snapshots (venue_key, asset, amount, fetched_at) VALUES"
       " ('gateway', 'USDC', 1, now() - interval '1 hour')");
  auto r = balances("/v3/balances?fresh=true");
  BOOST_TEST(r.status == 200);
  auto d = parse(r.body);
  BOOST_TEST(gateway.calls.load() == 1);
  BOOST_TEST(item(d, 0, "amount") == "250000.125000");
  BOOST_TEST(item(d, 0, "stale") == "false");
  BOOST_TEST(test::json_field(r.body, "errors") == "[]");
  // Appended, never overwritten.
  BOOST_TEST(count("SELECT count(*) FROM balance_snapshots") == 2);
  BOOST_TEST(scalar("SELECT string_agg(amount::text, ',' ORDER BY id) FROM balance_snapshots") ==
             "1,250000.125000");
  // fresh=false is a plain read.
  BOOST_TEST(balances("/v3/balances?fresh=false").status == 200);
  BOOST_TEST(gateway.calls.load() == 1);
}

BOOST_FIXTURE_TEST_CASE(failing_fetch_answers_stored_data_with_the_venue_error, balances_fixture) {
  start_api();
  exec("INSERT INTO balance_snapshots (venue_key, asset, amount, fetched_at) VALUES"
       " ('gateway', 'USDC', 77, now() - interval '1 hour')");
  for (auto [status, body] :
       std::vector<std::pair<int, std::string>>{{500, R"({"asset": "USDC", "amount": "1"})"},
                                                {200, "{not json"},
                                                {200, R"({"asset": "USDC", "amount": 1.25})"}}) {
    gateway.answer(status, body);
    auto r = balances("/v3/balances?fresh=true");
    BOOST_TEST(r.status == 200, body);
    auto d = parse(r.body);
    BOOST_TEST(item(d, 0, "amount") == "77");
    BOOST_TEST(item(d, 0, "stale") == "true");
    BOOST_REQUIRE(d["errors"].IsArray() && d["errors"].Size() == 1u);
    BOOST_TEST(json::get_string(d["errors"][0], "venue_key") == "gateway");
    BOOST_TEST(!json::get_string(d["errors"][0], "message").empty());
    BOOST_TEST(count("SELECT count(*) FROM balance_snapshots") == 1, body); // nothing half-written
  }
}

BOOST_FIXTURE_TEST_CASE(failing_fetch_with_nothing_stored_is_503, balances_fixture) {
  start_api();
  gateway.answer(502, "bad gateway");
  auto r = balances("/v3/balances?fresh=true");
  BOOST_TEST(r.status == 503);
  BOOST_TEST(error_code(r.body) == "unavailable");
  BOOST_TEST(r.body.find("HTTP 502") != std::string::npos, r.body);
  BOOST_TEST(count("SELECT count(*) FROM balance_snapshots") == 0);
  // Without fresh there is simply nothing yet.
  BOOST_TEST(balances().status == 200);
}

BOOST_FIXTURE_TEST_CASE(gateway_down_or_unconfigured_is_never_a_500, balances_fixture) {
  // Nobody listens at the configured URL.
  start_api({{"MG_GATEWAY_API_URL", "http://127.0.0.1:" + std::to_string(test::free_port())}});
  auto r = balances("/v3/balances?fresh=true");
  BOOST_TEST(r.status == 503, r.body);
  stop();
  start("e2e-unconfigured", {}); // no MG_GATEWAY_API_URL at all
  auto none = balances("/v3/balances?fresh=true");
  BOOST_TEST(none.status == 503, none.body);
  BOOST_TEST(none.body.find("MG_GATEWAY_API_URL") != std::string::npos, none.body);
  exec("INSERT INTO balance_snapshots (venue_key, asset, amount) VALUES ('gateway', 'USDC', 3)");
  auto stored = balances("/v3/balances?fresh=true");
  BOOST_TEST(stored.status == 200, stored.body);
  auto d = parse(stored.body);
  BOOST_TEST(item(d, 0, "amount") == "3");
  BOOST_TEST(d["errors"][0]["venue_key"].IsNull());
}

BOOST_FIXTURE_TEST_CASE(a_gateway_url_that_is_not_http_keeps_the_api_up_and_says_so,
                        balances_fixture) {
  start("e2e-ftp", {{"MG_GATEWAY_API_URL", "ftp://127.0.0.1/"}});
  auto fresh = balances("/v3/balances?fresh=true");
  BOOST_TEST(fresh.status == 503, fresh.body);
  BOOST_TEST(fresh.body.find("not an http(s) URL") != std::string::npos, fresh.body);
  BOOST_TEST(balances().status == 200); // the stored view is unaffected
}

BOOST_FIXTURE_TEST_CASE(bad_query_and_wrong_scope_are_refused, balances_fixture) {
  start_api();
  for (const char* target : {"/v3/balances?fresh=yes", "/v3/balances?fresh=1",
                             "/v3/balances?stale=true", "/v3/balances?fresh=true&fresh=true"}) {
    auto r = balances(target);
    BOOST_TEST(r.status == 400, target << " → " << r.body);
    BOOST_TEST(error_code(r.body) == "invalid_request", target);
  }
  BOOST_TEST(client(creator).get("/v3/balances").status == 403);
  BOOST_TEST(client(creator).get("/v3/balances?fresh=true").status == 403);
  BOOST_TEST(gateway.calls.load() == 0);
  BOOST_TEST(count("SELECT count(*) FROM balance_snapshots") == 0);
}

BOOST_FIXTURE_TEST_CASE(serve_runs_the_snapshot_worker_only_under_its_flag, balances_fixture) {
  // Flag on, no URL: one warning, no worker, the process serves.
  start("e2e-no-gateway", {{"MG_BALANCE_SNAPSHOT_ENABLED", "true"}});
  BOOST_TEST(balances().status == 200);
  auto log = server->log();
  BOOST_TEST(log.find("\"conditional worker skipped: its client is not configured\","
                      "\"worker\":\"balance_snapshot\"") != std::string::npos,
             log);
  BOOST_TEST(count("SELECT count(*) FROM worker_heartbeats WHERE worker_name = "
                   "'balance_snapshot'") == 0);
  // The rollup needs no client: it runs by default.
  BOOST_TEST(count("SELECT count(*) FROM worker_heartbeats WHERE worker_name = "
                   "'balance_history_rollup' AND worker_group = 'sidecar'") == 1);
  stop();
  // Flag on with the gateway: a sidecar that appends rows.
  start("e2e-gateway", {{"MG_BALANCE_SNAPSHOT_ENABLED", "true"},
                        {"MG_GATEWAY_API_URL", gateway.url()},
                        {"MG_BALANCE_SNAPSHOT_INTERVAL_SECONDS", "0.2"}});
  BOOST_TEST(count("SELECT count(*) FROM worker_heartbeats WHERE worker_name = 'balance_snapshot'"
                   " AND worker_group = 'sidecar' AND runtime_node = 'e2e-gateway'") == 1);
  BOOST_TEST(wait_for("SELECT count(*) >= 2 FROM balance_snapshots", 10s));
  auto d = parse(balances().body);
  BOOST_TEST(item(d, 0, "amount") == "250000.125000");
  stop();
  // Flag off (the default): no worker, even with a URL.
  start("e2e-flag-off", {{"MG_GATEWAY_API_URL", gateway.url()}});
  BOOST_TEST(count("SELECT count(*) FROM worker_heartbeats WHERE worker_name = 'balance_snapshot'"
                   " AND runtime_node = 'e2e-flag-off'") == 0);
}

BOOST_AUTO_TEST_SUITE_END()
