// notification_dispatcher, ccip_drift and verify_drift in a real runtime:
// seeded heartbeats and the supervisor put them in the sidecar group; a
// drift the CCIP sidecar reports reaches the operator webhook end to end; a
// failing drift poll is counted in its heartbeat and stops nothing; a core
// failure is notified (best effort, fresh connection) before exit 1.
#include <boost/test/unit_test.hpp>

#include <httplib.h>

#include <thread>

#include "domain/json.hpp"
#include "tests/support/callback_receiver.hpp"
#include "tests/support/http_peer.hpp"
#include "tests/support/runtime_fixture.hpp"
#include "tests/support/serve_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

/// A local CCIP sidecar answering GET /v1/registry/drift with `status`/`body`.
struct drift_sidecar {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  drift_sidecar(int status, std::string body) {
    server.Get("/v1/registry/drift", [=](const httplib::Request&, httplib::Response& res) {
      res.status = status;
      res.set_content(body, "application/json");
    });
    port = test::listen_in_background(server, thread);
  }
  ~drift_sidecar() { test::stop_listening(server, thread); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

std::string supervisor_status(test::runtime_fixture& f) {
  std::string out;
  (*f.self)
      ->request(f.rt->supervisor(), 5s, actors::status_atom::value)
      .receive([&](const std::string& s) { out = s; }, [&](caf::error&) { out = "error"; });
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(notification_workers)

BOOST_FIXTURE_TEST_CASE(ccip_drift_reaches_the_webhook_through_the_sidecar_group,
                        test::runtime_fixture) {
  test::callback_receiver webhook;
  drift_sidecar ccip(200, R"({"items": [{"key": "onramp:1:137", "state": "drift",
                                          "expected": "0xaa", "observed": "0xbb"}]})");
  settings.notify_enabled = true;
  settings.notify_webhook_url = webhook.url("/ops");
  settings.notify_interval_seconds = 0.1;
  settings.ccip_enabled = true;
  settings.ccip_sidecar_url = ccip.url();
  settings.ccip_drift_poll_interval_seconds = 0.1;
  settings.verify_drift_enabled = true;
  settings.evm_rpc_urls = "1=http://127.0.0.1:" + std::to_string(test::free_port());
  apply_settings();
  start();
  for (auto* name : {"notification_dispatcher", "ccip_drift", "verify_drift"})
    BOOST_TEST(count(std::string("SELECT count(*) FROM worker_heartbeats WHERE worker_name = '") +
                     name + "' AND worker_group = 'sidecar' AND runtime_node = 'test-node'") == 1);
  auto status = supervisor_status(*this);
  for (auto* name : {"notification_dispatcher", "ccip_drift", "verify_drift"})
    BOOST_TEST(status.find(std::string("\"name\":\"") + name + "\",\"group\":\"sidecar\"") !=
               std::string::npos);
  BOOST_TEST(eventually([&] { return webhook.count() >= 1; }, 10s));
  // Polled many times, notified once.
  std::this_thread::sleep_for(500ms);
  BOOST_TEST(webhook.count() == 1u);
  auto doc = json::parse(webhook.received()[0].body);
  BOOST_REQUIRE(doc.has_value());
  BOOST_TEST(json::get_string(*doc, "kind") == "registry_drift");
  BOOST_TEST(json::get_string(*doc, "subject") == "ccip:onramp:1:137");
  BOOST_TEST(scalar("SELECT status FROM notification_outbox") == "sent");
  // verify_drift found nobody at its endpoint: logged and kept, not drift.
  BOOST_TEST(count("SELECT count(*) FROM registry_drift WHERE source = 'evm_chain_id'") == 0);
  BOOST_TEST(stop() == 0);
}

BOOST_FIXTURE_TEST_CASE(a_failing_drift_poll_is_counted_and_stops_nothing, test::runtime_fixture) {
  drift_sidecar ccip(500, R"({"error": "boom"})");
  settings.ccip_enabled = true;
  settings.ccip_sidecar_url = ccip.url();
  settings.ccip_drift_poll_interval_seconds = 0.1;
  apply_settings();
  start();
  BOOST_TEST(eventually(
      [&] {
        return count("SELECT count(*) FROM worker_heartbeats WHERE worker_name = 'ccip_drift'"
                     " AND consecutive_errors > 0 AND last_error LIKE '%HTTP 500%'") == 1;
      },
      10s));
  BOOST_TEST(count("SELECT count(*) FROM registry_drift") == 0);
  BOOST_TEST(stop() == 0);
}

BOOST_FIXTURE_TEST_CASE(core_group_failure_is_notified_before_exit_1, test::runtime_fixture) {
  auto passes = std::make_shared<std::atomic<int>>(0);
  start({{"test_core_crasher", actors::worker_group::core, domain::loop_policy{0.05, 0, false},
          [passes](db::connection_slot&) -> workers::pass_result {
            if (++*passes == 2)
              throw 42; // escapes the loop runner: the core group fails
            return {};
          }}});
  BOOST_TEST(wait_exit(15s) == 1);
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox WHERE kind = 'core_group_failure'"
                   " AND subject = 'test_core_crasher'") == 1);
  auto payload = json::parse(scalar("SELECT payload::text FROM notification_outbox"
                                    " WHERE kind = 'core_group_failure'"));
  BOOST_REQUIRE(payload.has_value());
  BOOST_TEST(json::get_string(*payload, "runtime_node") == "test-node");
  BOOST_TEST(json::get_string(*payload, "worker") == "test_core_crasher");
  BOOST_TEST(!json::get_string(*payload, "reason").empty());
}

BOOST_AUTO_TEST_SUITE_END()
