#include "tests/support/cluster_fixture.hpp"

#include <boost/test/unit_test.hpp>
#include <caf/forwarding_actor_proxy.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/middleman.hpp>
#include <stdexcept>
#include <thread>

namespace mg::test {

namespace {

void openssl(const std::string& args) {
  auto r = run_shell("openssl " + args);
  if (r.status != 0)
    throw std::runtime_error("openssl " + args + " failed: " + r.output);
}

const char* ec_key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

} // namespace

test_pki::test_pki(std::string d)
    : dir(std::move(d)), ca_cert(dir + "-ca.pem"), ca_key(dir + "-ca.key") {
  openssl(std::string("req -x509 ") + ec_key + " -keyout " + ca_key + " -out " + ca_cert +
          " -days 1 -subj /CN=movegate-test-ca");
}

cluster::tls_files test_pki::issue(const std::string& name) const {
  auto base = dir + "-" + name;
  openssl(std::string("req ") + ec_key + " -keyout " + base + ".key -out " + base +
          ".csr -subj /CN=" + name);
  openssl("x509 -req -in " + base + ".csr -CA " + ca_cert + " -CAkey " + ca_key +
          " -CAcreateserial -out " + base + ".pem -days 1");
  return {base + ".pem", base + ".key", ca_cert};
}

cluster::tls_files test_pki::self_signed(const std::string& name) const {
  auto base = dir + "-" + name;
  openssl(std::string("req -x509 ") + ec_key + " -keyout " + base + ".key -out " + base +
          ".pem -days 1 -subj /CN=" + name);
  return {base + ".pem", base + ".key", base + ".pem"};
}

client_system::client_system(const std::optional<cluster::tls_files>& tls) {
  cluster::configure(cfg, tls);
  sys = std::make_unique<caf::actor_system>(cfg);
}

caf::actor forge_handle(caf::actor_system& sys, const caf::node_id& node, caf::actor_id id) {
  // What basp_broker::make_proxy does: messages to it go to the BASP
  // broker, which routes them by the proxy's node and id alone.
  auto broker = sys.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
  caf::actor_config cfg;
  auto proxy = caf::make_actor<caf::forwarding_actor_proxy, caf::strong_actor_ptr>(id, node, &sys,
                                                                                   cfg, broker);
  return caf::actor_cast<caf::actor>(proxy);
}

void cluster_serve_fixture::start_cluster(const std::string& node,
                                          std::map<std::string, std::string> extra) {
  // A free port can be taken by a parallel test before serve binds it: serve
  // then exits at publish, and the cluster starts again on another port.
  constexpr int attempts = 3;
  for (int attempt = 1;; ++attempt) {
    cluster_port = free_port();
    if (door_opened(node, extra) || attempt == attempts)
      break;
  }
  BOOST_REQUIRE_MESSAGE(server->log().find(door_line) != std::string::npos, server->log());
}

void cluster_serve_fixture::start_on_cluster_port(const std::string& node,
                                                  std::map<std::string, std::string> extra) {
  BOOST_REQUIRE_MESSAGE(door_opened(node, std::move(extra)), server->log());
}

bool cluster_serve_fixture::door_opened(const std::string& node,
                                        std::map<std::string, std::string> extra) {
  auto host = std::string("127.0.0.1");
  if (auto it = extra.find("MG_CLUSTER_ADDR"); it != extra.end())
    host = it->second.substr(0, it->second.rfind(':'));
  extra["MG_CLUSTER_ADDR"] = host + ":" + std::to_string(cluster_port);
  start(node, extra);
  // /healthz answers before the cluster door is published (and the port in
  // cluster_nodes is the configured one from the start): wait for its line,
  // or for serve to exit.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (server->log().find(door_line) != std::string::npos)
      return true;
    if (!server->running())
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::unique_ptr<cluster::movement_client>
cluster_serve_fixture::session(const api_key_spec& k, std::chrono::milliseconds timeout,
                               caf::actor_system* in) {
  auto c = std::make_unique<cluster::movement_client>(in ? *in : sys(), timeout);
  c->connect("127.0.0.1", static_cast<uint16_t>(cluster_port));
  c->login(k.id, k.secret);
  return c;
}

} // namespace mg::test
