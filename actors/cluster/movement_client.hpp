#pragma once
// movegate_client: what a sibling C++ service links to talk to a
// `movegate serve` over CAF (SPEC §8) instead of HTTP. It needs only CAF
// and domain/ (signing), never PostgreSQL.
//
//   caf::actor_system_config cfg;
//   mg::cluster::configure(cfg);                // middleman + heartbeats
//   // or configure(cfg, tls_files{cert, key, ca}) for a TLS cluster door
//   caf::actor_system sys{cfg};
//   mg::cluster::movement_client c(sys);
//   c.connect("127.0.0.1", 4242);               // bounded by the timeout
//   c.login("ops-1", secret);                   // HMAC login proof
//   auto r = c.create(R"({"template_key": …})"); // {201, movement JSON}
//
// Calls answer {status, body} exactly as /v3 would (403, 404, 409, 429 …)
// and carry the session token login received (a client built before
// session tokens gets 401 from a current movegate: rebuild it);
// transport failures (nothing listening, no answer in time, peer gone,
// login refused) throw client_error with a message saying which.
#include <caf/all.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "actors/cluster/cluster_tls.hpp"
#include "actors/protocol.hpp"

namespace mg::cluster {

struct reply {
  int status = 0;
  std::string body;
};

/// A movement event pushed to a subscribed client.
struct pushed_event {
  std::string request_id;
  std::string event_id;
  /// movement_events.seq: events of one request arrive in increasing seq.
  uint64_t seq = 0;
  /// The item GET /v3/movements/{id}/events gives for this event.
  std::string json;
};

class client_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Loads CAF's middleman with heartbeats on (off by default in CAF 0.17:
/// a frozen peer would never be noticed), and CAF's OpenSSL module with
/// `tls` when given; call on the config before the actor system is made.
/// Throws client_error when `tls` names unusable files. `serve` uses it too.
void configure(caf::actor_system_config& cfg, const std::optional<tls_files>& tls = std::nullopt);

/// One connection and (after login) one session. Not thread-safe: use it
/// from one thread (its calls block on a scoped actor).
class movement_client {
public:
  explicit movement_client(caf::actor_system& sys,
                           std::chrono::milliseconds timeout = std::chrono::seconds(10));

  /// Connects to the movement_api published at host:port; throws
  /// client_error when nothing listens, nothing answers within the timeout,
  /// or the actor there is not a movement_api.
  void connect(const std::string& host, uint16_t port);

  /// Logs in with an API key (actors/protocol.hpp's login proof); throws
  /// client_error with the server's reason (e.g. "unknown key", "bad
  /// signature", "replayed nonce").
  void login(const std::string& key_id, const std::string& secret);

  /// As login(), with the proof's parts given (tests: replay, bad
  /// signature). `timestamp` 0 = now.
  void login_with(const std::string& key_id, uint64_t timestamp, const std::string& nonce,
                  const std::string& signature_hex);

  reply create(const std::string& json_body);
  reply approve(const std::string& id, const std::string& json_body = "{}");
  reply reject(const std::string& id, const std::string& json_body = "{}");
  reply cancel(const std::string& id, const std::string& json_body = "{}");
  reply get(const std::string& id);
  /// `query` as after '?' in GET /v3/movements, e.g. "state=EXECUTING".
  reply list(const std::string& query = "");

  /// Subscribes this client to the events of request `id` ("" = every
  /// request the key may read), from now on or right after event
  /// `after_event_id` (resume without a gap). Needs scope read (else 403).
  /// Events then queue up for next_event().
  reply subscribe(const std::string& id = "", const std::string& after_event_id = "");
  /// Ends the subscription to `id` ("" = all of this client's).
  reply unsubscribe(const std::string& id = "");
  /// The next pushed event, waiting up to `timeout`; nullopt when none came.
  std::optional<pushed_event> next_event(std::chrono::milliseconds timeout);

  /// The movement_api's status JSON ({"logins", "refused", "subscribers"}).
  std::string api_status();

  /// Offers `provider` as executor `key` (scope admin, else 403) until it
  /// or this session goes down; see spawn_executor_actor in
  /// actors/cluster/provider_actor.hpp.
  reply register_executor(const std::string& key, const actors::remote_executor_actor& provider);
  /// As register_executor, for a signer.
  reply register_signer(const std::string& key, const actors::remote_signer_actor& provider);

  /// Waits up to `timeout` for this session to end — movegate stopped, the
  /// connection dropped — and returns true when it has (or there is none).
  /// Whatever was registered through it is forgotten by movegate then:
  /// connect, log in and register again.
  bool session_lost(std::chrono::milliseconds timeout);

  bool logged_in() const { return static_cast<bool>(session_); }
  /// The session's handle (tests: what a peer that saw it could address).
  caf::actor_addr session_address() const { return session_.address(); }
  const std::string& where() const { return where_; }

private:
  template <class Atom, class... Ts> reply call(const char* what, Atom atom, Ts&&... xs);
  std::string describe(const caf::error& e, const char* what) const;
  std::string describe_connect_failure(const caf::error& e, const std::string& host,
                                       uint16_t port) const;

  caf::actor_system& sys_;
  caf::scoped_actor self_;
  std::chrono::milliseconds timeout_;
  std::string where_;
  actors::movement_api_actor api_;
  actors::movement_session session_;
  /// Login's session token: every session message carries it.
  std::string token_;
};

/// 32 random hex characters (a fresh login nonce).
std::string random_nonce();

} // namespace mg::cluster
