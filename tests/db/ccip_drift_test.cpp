// ccip_drift against a local HTTP CCIP sidecar (GET /v1/registry/drift):
// items recorded in registry_drift, drift notified once per episode and its
// recovery too; a sidecar that is down, answers 500, is too slow or sends a
// malformed report fails the pass and writes nothing.
#include <boost/test/unit_test.hpp>

#include <httplib.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "actors/workers/ccip_drift.hpp"
#include "actors/workers/worker_table.hpp"
#include "domain/json.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/http_peer.hpp"
#include "tests/support/serve_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

/// A local sidecar answering `status` with `body` after `delay`.
struct sidecar {
  std::mutex m;
  int status = 200;
  std::string body = R"({"items": []})";
  std::chrono::milliseconds delay{0};
  std::atomic<int> polls{0};
  httplib::Server server;
  std::thread thread;
  int port = 0;

  sidecar() {
    server.Get("/ccip/v1/registry/drift", [this](const httplib::Request&, httplib::Response& res) {
      ++polls;
      std::chrono::milliseconds d;
      {
        std::lock_guard<std::mutex> g(m);
        res.status = status;
        res.set_content(body, "application/json");
        d = delay;
      }
      std::this_thread::sleep_for(d);
    });
    port = test::listen_in_background(server, thread);
  }
  ~sidecar() { test::stop_listening(server, thread); }
  void answer(int s, std::string b) {
    std::lock_guard<std::mutex> g(m);
    status = s;
    body = std::move(b);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port) + "/ccip"; }
};

const char* const one_drift = R"({"items": [
  {"key": "onramp:1:137", "state": "drift", "expected": "0xaa", "observed": "0xbb",
   "detail": {"lane": "1->137"}},
  {"key": "offramp:137:1", "state": "ok", "expected": "0xcc", "observed": "0xcc"}]})";

struct ccip_fixture : test::db_fixture {
  ccip_fixture() {
    settings.ccip_enabled = true;
    settings.ccip_sidecar_url = peer.url();
  }
  workers::pass_result pass(double timeout = 5) {
    return workers::ccip_drift_pass(conn, settings, nullptr, timeout);
  }
  std::string state(const std::string& key) {
    return scalar("SELECT drift_state FROM registry_drift WHERE source = 'ccip' AND subject = '" +
                  key + "'");
  }
  long notes(const std::string& kind) {
    return count("SELECT count(*) FROM notification_outbox WHERE kind = '" + kind + "'");
  }
  /// The pass fails and leaves the tables as they were.
  void expect_refused(const std::string& what, double timeout = 5) {
    auto rows = count("SELECT count(*) FROM registry_drift");
    auto snapshot = scalar("SELECT coalesce(string_agg(subject || drift_state || drift_episode,"
                           " ',' ORDER BY subject), '') FROM registry_drift");
    try {
      pass(timeout);
      BOOST_ERROR("the pass should have failed");
    } catch (const std::exception& ex) {
      BOOST_TEST(std::string(ex.what()).find(what) != std::string::npos,
                 ex.what() << " should mention " << what);
    }
    BOOST_TEST(count("SELECT count(*) FROM registry_drift") == rows);
    BOOST_TEST(scalar("SELECT coalesce(string_agg(subject || drift_state || drift_episode,"
                      " ',' ORDER BY subject), '') FROM registry_drift") == snapshot);
  }
  sidecar peer;
};

} // namespace

BOOST_AUTO_TEST_SUITE(ccip_drift)

BOOST_FIXTURE_TEST_CASE(drift_is_recorded_and_notified_once_then_recovery, ccip_fixture) {
  peer.answer(200, one_drift);
  BOOST_TEST(pass().processed == 2);
  pass();
  pass();
  BOOST_TEST(state("onramp:1:137") == "drift");
  BOOST_TEST(state("offramp:137:1") == "ok");
  BOOST_TEST(scalar("SELECT expected || ' ' || observed || ' ' || (detail->>'lane') FROM "
                    "registry_drift WHERE subject = 'onramp:1:137'") == "0xaa 0xbb 1->137");
  BOOST_REQUIRE(notes("registry_drift") == 1);
  auto payload = json::parse(
      scalar("SELECT payload::text FROM notification_outbox WHERE kind = 'registry_drift'"));
  BOOST_TEST(json::get_string(*payload, "source") == "ccip");
  BOOST_TEST(json::get_string(*payload, "subject") == "onramp:1:137");
  BOOST_TEST(json::get_string((*payload)["detail"], "lane") == "1->137");

  peer.answer(200, R"({"items": [{"key": "onramp:1:137", "state": "ok"}]})");
  pass();
  pass();
  BOOST_TEST(state("onramp:1:137") == "ok");
  BOOST_TEST(notes("registry_drift_resolved") == 1);
  BOOST_TEST(state("offramp:137:1") == "ok"); // not in the report: kept as it was
}

BOOST_FIXTURE_TEST_CASE(a_malformed_report_writes_nothing, ccip_fixture) {
  peer.answer(200, one_drift);
  pass();
  // One bad item refuses the whole report: its good first item is not recorded either.
  peer.answer(200, R"({"items": [{"key": "onramp:1:137", "state": "ok"},
                                 {"key": "x", "state": "sideways"}]})");
  expect_refused("items[1]: state");
  BOOST_TEST(state("onramp:1:137") == "drift");
  peer.answer(200, "{not json");
  expect_refused("not JSON");
  peer.answer(200, R"({"items": {"key": "a"}})");
  expect_refused("\"items\" array");
  peer.answer(200, R"({"items": [{"key": 7, "state": "ok"}]})");
  expect_refused("items[0]: key");
  peer.answer(200, R"({"items": [{"key": "a", "state": "ok", "detail": [1]}]})");
  expect_refused("detail must be an object");
  peer.answer(200, R"({"items": [{"key": "a", "state": "ok"}, {"key": "a", "state": "drift"}]})");
  expect_refused("duplicate key");
  BOOST_TEST(notes("registry_drift_resolved") == 0);
}

BOOST_FIXTURE_TEST_CASE(http_errors_timeouts_and_a_dead_sidecar_fail_the_pass, ccip_fixture) {
  peer.answer(500, R"({"error": "boom"})");
  expect_refused("HTTP 500");
  peer.answer(200, one_drift);
  peer.delay = 3000ms;
  auto started = std::chrono::steady_clock::now();
  expect_refused("timeout", 0.5);
  BOOST_TEST((std::chrono::steady_clock::now() - started < 2500ms));
  peer.delay = 0ms;
  settings.ccip_sidecar_url = "http://127.0.0.1:" + std::to_string(test::free_port());
  expect_refused("ccip sidecar: ");
  BOOST_TEST(count("SELECT count(*) FROM registry_drift") == 0);
}

BOOST_FIXTURE_TEST_CASE(maker_follows_flag_and_sidecar_url, test::db_fixture) {
  settings.ccip_enabled = false;
  settings.ccip_sidecar_url = "http://127.0.0.1:9";
  apply_settings();
  BOOST_TEST(!actors::make_worker("ccip_drift", ctx).has_value());
  settings.ccip_enabled = true;
  settings.ccip_sidecar_url = "";
  apply_settings();
  BOOST_TEST(!actors::make_worker("ccip_drift", ctx).has_value()); // skipped
  settings.ccip_sidecar_url = "http://127.0.0.1:9";
  settings.ccip_drift_poll_interval_seconds = 42;
  apply_settings();
  auto spec = actors::make_worker("ccip_drift", ctx);
  BOOST_REQUIRE(spec.has_value());
  BOOST_TEST(spec->name == "ccip_drift");
  BOOST_TEST(std::string(actors::to_string(spec->group)) == "sidecar");
  BOOST_TEST(spec->policy.interval_seconds == 42.0);
}

BOOST_AUTO_TEST_SUITE_END()
