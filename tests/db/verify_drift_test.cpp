// verify_drift against a real local chain (ganache) and, for the lane
// limits, a local JSON-RPC peer: a matching baseline is ok, a wrong code
// hash is drift (recorded, one notification however many passes), its
// recovery is recorded and notified, an endpoint serving another chain is
// drift of the chain id, and calls that fail, time out or answer garbage
// decide nothing. At most MG_VERIFY_DRIFT_CONCURRENCY calls per chain run
// at once.
#include <boost/test/unit_test.hpp>

#include <httplib.h>

#include <atomic>
#include <thread>

#include "actors/workers/verify_drift.hpp"
#include "actors/workers/worker_table.hpp"
#include "domain/evm_tx.hpp"
#include "domain/json.hpp"
#include "domain/keccak.hpp"
#include "persistence/drift_store.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/ganache.hpp"
#include "tests/support/http_peer.hpp"
#include "tests/support/serve_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

// Init code that returns 10 bytes of runtime code: PUSH1 42, store, return 32 bytes.
const char* const init_code = "0x600a600c600039600a6000f3602a60005260206000f3";
const char* const runtime_code = "0x602a60005260206000f3";

std::string keccak_0x(const std::string& hex) {
  return domain::to_0x_hex(domain::keccak256(*domain::parse_0x_hex(hex)));
}

struct drift_fixture : test::db_fixture {
  drift_fixture() {
    settings.verify_drift_enabled = true;
    settings.verify_drift_timeout_seconds = 5;
    settings.wakeups_enabled = false;
  }
  std::string add_baseline(std::uint64_t chain, const std::string& address, const std::string& hash,
                           const std::string& label = "token") {
    pqxx::work tx(conn.get());
    db::upsert_baseline(tx, {0, chain, address, hash, label});
    tx.commit();
    return scalar("SELECT id FROM registry_baselines WHERE chain_id = " + std::to_string(chain) +
                  " AND address = '" + address + "'");
  }
  std::string col(const std::string& id, const std::string& column) {
    return scalar("SELECT " + column + " FROM registry_baselines WHERE id = " + id);
  }
  workers::verify_drift_report pass() {
    workers::verify_drift_report r;
    workers::verify_drift_pass(conn, settings, &r);
    return r;
  }
  long notes(const std::string& kind) {
    return count("SELECT count(*) FROM notification_outbox WHERE kind = '" + kind + "'");
  }
};

/// A local JSON-RPC peer: eth_chainId answers `chain_id`; eth_getCode sleeps
/// `delay` (`slow_address`: `slow_delay`) and answers `code` (a JSON value).
struct rpc_peer {
  std::string chain_id = "0x1";
  std::string code = "\"0x602a60005260206000f3\"";
  std::chrono::milliseconds delay{0};
  std::string slow_address;
  std::chrono::milliseconds slow_delay{0};
  std::atomic<int> in_flight{0}, max_in_flight{0}, calls{0};
  httplib::Server server;
  std::thread thread;
  int port = 0;

  rpc_peer() {
    server.Post("/", [this](const httplib::Request& req, httplib::Response& res) {
      auto doc = json::parse(req.body);
      std::string method = json::get_string(*doc, "method");
      std::string result = "\"" + chain_id + "\"";
      if (method == "eth_getCode") {
        ++calls;
        int now = ++in_flight;
        for (int m = max_in_flight; now > m && !max_in_flight.compare_exchange_weak(m, now);)
          ;
        std::string address = (*doc)["params"][0].GetString();
        std::this_thread::sleep_for(address == slow_address ? slow_delay : delay);
        --in_flight;
        result = code;
      }
      res.set_content("{\"jsonrpc\":\"2.0\",\"id\":" + json::dump((*doc)["id"]) +
                          ",\"result\":" + result + "}",
                      "application/json");
    });
    port = test::listen_in_background(server, thread);
  }
  ~rpc_peer() { test::stop_listening(server, thread); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

std::string address_n(int n) {
  char buf[43];
  std::snprintf(buf, sizeof buf, "0x%040x", n + 1);
  return buf;
}

} // namespace

BOOST_AUTO_TEST_SUITE(verify_drift)

BOOST_FIXTURE_TEST_CASE(code_hash_ok_then_drift_once_then_recovery_on_ganache, drift_fixture) {
  test::ganache_chain chain;
  auto address = domain::to_0x_hex(chain.deploy(init_code));
  BOOST_REQUIRE(domain::to_0x_hex(chain.rpc().code(*domain::parse_0x_hex(address))) ==
                runtime_code);
  settings.evm_rpc_urls = chain.rpc_urls_setting();
  auto good = add_baseline(test::ganache_chain_id, address, keccak_0x(runtime_code));

  auto r = pass();
  BOOST_TEST(r.chains_checked == 1);
  BOOST_TEST(r.chains_drifted == 0);
  BOOST_TEST(col(good, "drift_state") == "ok");
  BOOST_TEST(col(good, "observed_code_hash") == keccak_0x(runtime_code));
  BOOST_TEST(col(good, "last_verified_at IS NOT NULL") == "t");
  BOOST_TEST(scalar("SELECT drift_state FROM registry_drift WHERE source = 'evm_chain_id'"
                    " AND subject = '1337'") == "ok");
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox") == 0);

  // The expectation disagrees with the chain: drift, notified once.
  auto wrong = keccak_0x("0x00");
  exec("UPDATE registry_baselines SET expected_code_hash = '" + wrong + "' WHERE id = " + good);
  for (int i = 0; i < 3; ++i)
    pass();
  BOOST_TEST(col(good, "drift_state") == "drift");
  BOOST_TEST(col(good, "drift_episode") == "1");
  BOOST_TEST(col(good, "observed_code_hash") == keccak_0x(runtime_code));
  BOOST_TEST(col(good, "drift_detected_at IS NOT NULL") == "t");
  BOOST_REQUIRE(notes("registry_drift") == 1);
  auto payload = json::parse(
      scalar("SELECT payload::text FROM notification_outbox WHERE kind = 'registry_drift'"));
  BOOST_TEST(json::get_string(*payload, "address") == address);
  BOOST_TEST(json::get_string(*payload, "expected") == wrong);
  BOOST_TEST(json::get_string(*payload, "observed") == keccak_0x(runtime_code));
  BOOST_TEST((*payload)["chain_id"].GetInt() == 1337);

  // Back in agreement: recovery recorded and notified once.
  exec("UPDATE registry_baselines SET expected_code_hash = '" + keccak_0x(runtime_code) +
       "' WHERE id = " + good);
  pass();
  pass();
  BOOST_TEST(col(good, "drift_state") == "ok");
  BOOST_TEST(col(good, "resolved_at IS NOT NULL") == "t");
  BOOST_TEST(notes("registry_drift_resolved") == 1);

  // A second episode pages again.
  exec("UPDATE registry_baselines SET expected_code_hash = '" + wrong + "' WHERE id = " + good);
  pass();
  BOOST_TEST(col(good, "drift_episode") == "2");
  BOOST_TEST(notes("registry_drift") == 2);
}

BOOST_FIXTURE_TEST_CASE(an_endpoint_serving_another_chain_is_chain_id_drift, drift_fixture) {
  test::ganache_chain chain; // chain id 1337, configured as chain 1
  settings.evm_rpc_urls = "1=" + chain.url;
  auto b = add_baseline(1, address_n(0), keccak_0x(runtime_code));
  auto r = pass();
  BOOST_TEST(r.chains_drifted == 1);
  BOOST_TEST(scalar("SELECT drift_state || ' ' || expected || ' ' || observed FROM registry_drift"
                    " WHERE source = 'evm_chain_id' AND subject = '1'") == "drift 1 1337");
  pass();
  BOOST_TEST(notes("registry_drift") == 1);
  // Its code says nothing about chain 1: the baseline is left undecided.
  BOOST_TEST(col(b, "drift_state") == "unverified");
  BOOST_TEST(col(b, "last_error").find("chain id mismatch") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(lanes_are_bounded_per_chain, drift_fixture) {
  rpc_peer peer;
  peer.delay = 150ms;
  settings.evm_rpc_urls = "1=" + peer.url();
  settings.verify_drift_concurrency = 2;
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i)
    ids.push_back(add_baseline(1, address_n(i), keccak_0x(runtime_code)));
  auto r = pass();
  BOOST_TEST(r.baselines.checked == 6);
  BOOST_TEST(peer.calls.load() == 6);
  BOOST_TEST(peer.max_in_flight.load() == 2);
  for (auto& id : ids)
    BOOST_TEST(col(id, "drift_state") == "ok");
}

BOOST_FIXTURE_TEST_CASE(a_lane_past_its_timeout_decides_nothing, drift_fixture) {
  rpc_peer peer;
  peer.slow_address = address_n(0);
  peer.slow_delay = 3000ms;
  settings.evm_rpc_urls = "1=" + peer.url();
  settings.verify_drift_timeout_seconds = 0.5;
  auto slow = add_baseline(1, address_n(0), keccak_0x("0x00"));
  auto fast = add_baseline(1, address_n(1), keccak_0x(runtime_code));
  auto started = std::chrono::steady_clock::now();
  auto r = pass();
  BOOST_TEST((std::chrono::steady_clock::now() - started < 2s));
  BOOST_TEST(r.baselines.undecided == 1);
  BOOST_TEST(col(slow, "drift_state") == "unverified"); // not drift: nothing was seen
  BOOST_TEST(col(slow, "last_error").rfind("timeout after 0.5 s", 0) == 0);
  BOOST_TEST(col(fast, "drift_state") == "ok");
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox") == 0);
}

BOOST_FIXTURE_TEST_CASE(malformed_replies_and_dead_endpoints_decide_nothing, drift_fixture) {
  rpc_peer peer;
  peer.code = "12345"; // a number where bytes belong
  auto dead = test::free_port();
  settings.evm_rpc_urls = "1=" + peer.url() + ",2=http://127.0.0.1:" + std::to_string(dead);
  auto bad = add_baseline(1, address_n(0), keccak_0x("0x00"));
  exec("UPDATE registry_baselines SET drift_state = 'drift', drift_episode = 1 WHERE id = " + bad);
  auto down = add_baseline(2, address_n(0), keccak_0x("0x00"));
  auto orphan = add_baseline(3, address_n(0), keccak_0x("0x00"));
  auto r = pass();
  BOOST_TEST(r.baselines.undecided == 3);
  BOOST_TEST(col(bad, "drift_state") == "drift"); // unchanged, no recovery claimed
  BOOST_TEST(!col(bad, "last_error").empty());
  BOOST_TEST(col(down, "last_error").find("eth_chainId failed") != std::string::npos);
  BOOST_TEST(col(orphan, "last_error") == "no MG_EVM_RPC_URLS endpoint for this chain");
  BOOST_TEST(count("SELECT count(*) FROM notification_outbox") == 0);
  BOOST_TEST(count("SELECT count(*) FROM registry_drift WHERE subject = '2'") == 0);
}

BOOST_FIXTURE_TEST_CASE(maker_follows_flag_and_rpc_urls, test::db_fixture) {
  settings.verify_drift_enabled = false;
  settings.evm_rpc_urls = "1=http://127.0.0.1:8545";
  apply_settings();
  BOOST_TEST(!actors::make_worker("verify_drift", ctx).has_value());
  settings.verify_drift_enabled = true;
  settings.evm_rpc_urls = "";
  apply_settings();
  BOOST_TEST(!actors::make_worker("verify_drift", ctx).has_value()); // skipped
  settings.evm_rpc_urls = "1=http://127.0.0.1:8545";
  apply_settings();
  auto spec = actors::make_worker("verify_drift", ctx);
  BOOST_REQUIRE(spec.has_value());
  BOOST_TEST(spec->name == "verify_drift");
  BOOST_TEST(std::string(actors::to_string(spec->group)) == "sidecar");
  BOOST_TEST(spec->policy.interval_seconds == 21600.0);
}

BOOST_AUTO_TEST_SUITE_END()
