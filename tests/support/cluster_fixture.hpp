#pragma once
// A `movegate serve` with its cluster door on a free loopback port (or, with
// TLS, on any address), and CAF actor systems for the test's siblings. Also
// a throwaway certificate authority for the TLS tests.
#include <caf/all.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "actors/cluster/movement_client.hpp"
#include "tests/support/serve_fixture.hpp"

namespace mg::test {

/// The keys most cluster tests log in with: four-eyes needs a creator and
/// a different approver.
namespace cluster_keys {
inline const api_key_spec creator{"creator", "c0ffee00c0ffee00c0ffee00c0ffee00",
                                  R"(["create", "read"])"};
inline const api_key_spec approver{"approver", "a11ce000a11ce000a11ce000a11ce000",
                                   R"(["approve", "read"])"};
inline const api_key_spec reader{"reader", "4ead004ead004ead004ead004ead0000", R"(["read"])"};
} // namespace cluster_keys

/// A two-node sim chain ("send" then a finality "confirm") the cluster
/// tests create over the door, and the body that creates one.
namespace cluster_movements {
inline const char* chain_template = R"({"template_key": "cl_chain", "version": 1,
    "nodes": [
      {"node_key": "send", "action_type": "chain_transfer", "executor_key": "sim",
       "side_effect": true, "config": {"to": "$ref:input.to"}},
      {"node_key": "confirm", "action_type": "destination_chain_finality_observe",
       "executor_key": "sim", "config": {"tx": "$ref:send.tx_hash",
       "sim": {"polls_until_done": 1, "retry_after_seconds": 0}}}],
    "edges": [["send", "confirm"]]})";

inline std::string create_body(const std::string& idempotency_key) {
  return R"({"template_key": "cl_chain", "intent": {"asset": "USDC", "amount": "5"},)"
         R"( "input_params": {"to": "0xabc"}, "idempotency_key": ")" +
         idempotency_key + "\"}";
}
} // namespace cluster_movements

/// A CA made with the openssl command line under `dir`, and certificates
/// it signs (EC P-256, valid for a day).
struct test_pki {
  explicit test_pki(std::string dir);
  /// A certificate and key for `name` signed by this CA; ca = this CA.
  cluster::tls_files issue(const std::string& name) const;
  /// A self-signed certificate for `name` (its own CA): no peer of this
  /// CA accepts it, and it accepts none of them.
  cluster::tls_files self_signed(const std::string& name) const;

  std::string dir;
  std::string ca_cert;
  std::string ca_key;
};

/// An actor system configured for cluster clients (TLS when given). The
/// config lives beside it: CAF 0.17's actor system keeps a reference to it.
struct client_system {
  explicit client_system(const std::optional<cluster::tls_files>& tls = std::nullopt);
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
};

/// A handle for actor `id` of `node`, made the way the middleman makes one
/// when an actor address arrives: any peer connected to `node` (through
/// `sys`) can do this for any id, whether it was ever told that id or not.
/// The attacker's tool of the session-token tests. When the handle goes,
/// the BASP broker forgets its proxy of (node, id), killing a real handle
/// to that actor too: keep forged handles while the real ones are used.
caf::actor forge_handle(caf::actor_system& sys, const caf::node_id& node, caf::actor_id id);

struct cluster_serve_fixture : serve_fixture {
  int cluster_port = 0;
  std::unique_ptr<client_system> clients = std::make_unique<client_system>();
  caf::actor_system& sys() { return *clients->sys; }

  /// start(node) with MG_CLUSTER_ADDR on a free loopback port plus `extra`
  /// (which may set its own MG_CLUSTER_ADDR host; its port is replaced).
  void start_cluster(const std::string& node, std::map<std::string, std::string> extra = {});
  /// As start_cluster on the port it chose before (a restart after stop()).
  void start_on_cluster_port(const std::string& node,
                             std::map<std::string, std::string> extra = {});

  /// Starts serve on cluster_port and waits for its cluster door: false when
  /// serve exited first or the door never opened.
  bool door_opened(const std::string& node, std::map<std::string, std::string> extra);
  static constexpr const char* door_line = "\"msg\":\"cluster front door listening\"";

  /// A connected, logged-in client of `in` (default: clients), failing the
  /// test otherwise.
  std::unique_ptr<cluster::movement_client>
  session(const api_key_spec& k, std::chrono::milliseconds timeout = std::chrono::seconds(10),
          caf::actor_system* in = nullptr);

  /// The client_error message of `f`, "" when it did not throw.
  template <class F> static std::string error_of(F&& f) {
    try {
      f();
    } catch (const cluster::client_error& e) {
      return e.what();
    }
    return "";
  }
};

} // namespace mg::test
