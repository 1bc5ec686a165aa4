// Mutual TLS on the cluster door (SPEC §8, issue 6) against a real `movegate
// serve` bound to every address: only siblings whose certificate chains to
// the configured CA get in (the example sibling runs a movement to
// COMPLETED over it); a plain CAF peer or a foreign certificate fails fast
// and changes nothing; unusable TLS files stop start-up naming the variable.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <httplib.h>
#include <thread>

#include "build_paths.hpp"
#include "tests/support/cluster_fixture.hpp"

using namespace mg;
using namespace std::chrono;
using namespace std::chrono_literals;

namespace {

using namespace test::cluster_keys;

const char* chain_template = R"({"template_key": "tls_chain", "version": 1,
    "nodes": [
      {"node_key": "send", "action_type": "chain_transfer", "executor_key": "sim",
       "side_effect": true, "config": {"to": "$ref:input.to"}}],
    "edges": []})";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct tls_fixture : test::cluster_serve_fixture {
  test::test_pki pki{prefix + "-pki"};
  cluster::tls_files node = pki.issue("node");
  cluster::tls_files sibling = pki.issue("sibling");

  tls_fixture() {
    add_template(chain_template);
    keys = {creator, approver};
  }

  static std::map<std::string, std::string> tls_env(const cluster::tls_files& f) {
    return {{"MG_CLUSTER_TLS_CERT_FILE", f.certificate},
            {"MG_CLUSTER_TLS_KEY_FILE", f.key},
            {"MG_CLUSTER_TLS_CA_FILE", f.ca}};
  }

  /// Runs serve with `extra` until it exits (it should refuse to start).
  std::pair<int, std::string> refused_start(std::map<std::string, std::string> extra) {
    auto e = env("e2e-tls");
    for (auto& [k, v] : extra)
      e[k] = v;
    test::child serve({"serve"}, e, prefix + "-refused.log");
    // Refused at start-up, but a loaded machine may take long to get there.
    int code = serve.wait(90s);
    return {code, serve.log()};
  }

  /// How connecting from a client system configured with `tls` ends:
  /// "" when connected, else the client_error, and how long it took.
  std::pair<std::string, double> connect_from(const std::optional<cluster::tls_files>& tls) {
    return connect_to(cluster_port, tls);
  }

  /// connect_from, against `port`.
  static std::pair<std::string, double> connect_to(int port,
                                                   const std::optional<cluster::tls_files>& tls) {
    test::client_system client(tls);
    cluster::movement_client c(*client.sys, 5s);
    auto started = steady_clock::now();
    auto why = error_of([&] { c.connect("127.0.0.1", static_cast<uint16_t>(port)); });
    return {why, duration<double>(steady_clock::now() - started).count()};
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(cluster_tls)

BOOST_FIXTURE_TEST_CASE(off_loopback_the_door_admits_only_siblings_certified_by_the_ca,
                        tls_fixture) {
  auto extra = tls_env(node);
  extra["MG_CLUSTER_ADDR"] = "0.0.0.0:0";
  start_cluster("e2e-tls", extra);

  // The example sibling, over TLS with its own certificate: create,
  // approve, follow to COMPLETED.
  auto run = test::run_shell(
      std::string(MG_BINARY_DIR) + "/movegate-sibling --cluster 127.0.0.1:" +
      std::to_string(cluster_port) + " --keys " + keys_path +
      " --creator creator --approver approver --template tls_chain --input '{\"to\": \"0xabc\"}'"
      " --timeout 30 --tls-cert " +
      sibling.certificate + " --tls-key " + sibling.key + " --tls-ca " + sibling.ca);
  BOOST_TEST(run.status == 0, run.output << "\n" << server->log());
  BOOST_TEST(contains(run.output, "state COMPLETED"), run.output);

  // A plain CAF peer, a self-signed certificate, and a certificate from
  // another CA that trusts only its own: each refused during the handshake,
  // quickly, with the reason.
  auto plain = connect_from(std::nullopt);
  BOOST_TEST(contains(plain.first, "closed the connection during the handshake"), plain.first);
  BOOST_TEST(plain.second < 3.0);
  auto stranger = connect_from(pki.self_signed("stranger"));
  BOOST_TEST(contains(stranger.first, "TLS refused"), stranger.first);
  BOOST_TEST(stranger.second < 3.0);
  test::test_pki other_ca{prefix + "-other"};
  auto foreign = connect_from(other_ca.issue("foreign"));
  BOOST_TEST(contains(foreign.first, "TLS refused"), foreign.first);

  // None of that disturbed the door: a certified client still gets in.
  test::client_system certified(sibling);
  auto c = session(creator, 10s, certified.sys.get());
  auto listed = c->list();
  BOOST_TEST(listed.status == 200, listed.body);
  BOOST_TEST(count("SELECT count(*) FROM movement_requests") == 1);
  BOOST_TEST(server->running());
}

// A TLS client told apart a port whose listener refuses its handshake (an
// HTTP server here, which answers a ClientHello with an error and closes)
// from a port nothing listens on, whichever side saw the handshake fail.
BOOST_FIXTURE_TEST_CASE(a_refused_handshake_is_told_apart_from_nothing_listening, tls_fixture) {
  httplib::Server http;
  const int port = http.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { http.listen_after_bind(); });
  auto refused = connect_to(port, sibling);
  http.stop();
  serving.join();
  BOOST_TEST(contains(refused.first, "TLS refused"), refused.first);
  auto nothing = connect_to(port, sibling);
  BOOST_TEST(contains(nothing.first, "cannot reach movegate"), nothing.first);
}

BOOST_FIXTURE_TEST_CASE(nodes_of_a_tls_cluster_watch_each_other_over_tls, tls_fixture) {
  start_cluster("e2e-tls-1", tls_env(node));
  auto second_env = tls_env(pki.issue("node2"));
  second_env["MG_DATABASE_URL"] = url;
  second_env["MG_RUNTIME_NODE"] = "e2e-tls-2";
  test::child second({"serve"}, second_env, prefix + "-e2e-tls-2.log");
  auto logged = [](test::child& c, const std::string& what, const std::string& peer) {
    return c.log().find("\"msg\":\"" + what + "\",\"peer\":\"" + peer + "\"") != std::string::npos;
  };
  bool both = false;
  for (int i = 0; i < 600 && !both; ++i) {
    std::this_thread::sleep_for(100ms);
    both = logged(*server, "watching cluster peer", "e2e-tls-2") &&
           logged(second, "watching cluster peer", "e2e-tls-1");
  }
  BOOST_TEST(both, server->log() << "\n" << second.log());
  second.signal(SIGKILL);
  bool noticed = false;
  for (int i = 0; i < 300 && !noticed; ++i) {
    std::this_thread::sleep_for(100ms);
    noticed =
        logged(*server, "cluster peer connection lost; looking at its lease now", "e2e-tls-2");
  }
  BOOST_TEST(noticed, server->log());
}

BOOST_FIXTURE_TEST_CASE(unusable_tls_files_stop_start_up_naming_the_variable, tls_fixture) {
  auto wrong_key = tls_env(node);
  wrong_key["MG_CLUSTER_TLS_KEY_FILE"] = sibling.key;
  auto [code, log] = refused_start(wrong_key);
  BOOST_TEST(code == 1);
  BOOST_TEST(contains(log, "MG_CLUSTER_TLS_KEY_FILE: '" + sibling.key + "' is not the key"), log);

  auto missing = tls_env(node);
  missing["MG_CLUSTER_TLS_CERT_FILE"] = prefix + "-no-such.pem";
  std::tie(code, log) = refused_start(missing);
  BOOST_TEST(code == 1);
  BOOST_TEST(contains(log, "MG_CLUSTER_TLS_CERT_FILE: cannot open"), log);

  auto unsigned_by_ca = tls_env(pki.self_signed("loner"));
  unsigned_by_ca["MG_CLUSTER_TLS_CA_FILE"] = pki.ca_cert;
  std::tie(code, log) = refused_start(unsigned_by_ca);
  BOOST_TEST(code == 1);
  BOOST_TEST(contains(log, "does not verify against"), log);

  auto not_a_ca = tls_env(node);
  not_a_ca["MG_CLUSTER_TLS_CA_FILE"] = node.key;
  std::tie(code, log) = refused_start(not_a_ca);
  BOOST_TEST(code == 1);
  BOOST_TEST(contains(log, "MG_CLUSTER_TLS_CA_FILE"), log);

  auto half = tls_env(node);
  half.erase("MG_CLUSTER_TLS_CA_FILE");
  std::tie(code, log) = refused_start(half);
  BOOST_TEST(code == 2); // invalid settings, as every other setting
  BOOST_TEST(contains(log, "MG_CLUSTER_TLS_CA_FILE: must be set along with"), log);

  // Nothing joined the cluster under any of those attempts.
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes") == 0);
}

BOOST_AUTO_TEST_SUITE_END()
