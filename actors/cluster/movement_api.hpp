#pragma once
// The cluster front door (SPEC §8): `movement_api` published on
// MG_CLUSTER_ADDR. A sibling logs in with an API key (the login proof of
// actors/protocol.hpp) and gets a `movement_session` bound to that key's
// scopes; its calls go through the same movement_service as HTTP /v3
// (scopes, four-eyes, audit, the /v3 per-key rate limiter) and answer
// (status, JSON body) exactly as /v3 would. Every session message carries
// the session token login answered (a session is a capability, not an
// address: see actors/protocol.hpp).
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/cluster/cluster_tls.hpp"
#include "actors/cluster/login_limits.hpp"
#include "actors/protocol.hpp"
#include "config/settings.hpp"
#include "domain/api_auth.hpp"
#include "persistence/connection_pool.hpp"
#include "services/movement_service.hpp"

namespace mg::actors {

/// What the movement_api actor and its sessions share. Owned by the front
/// doors, which outlive the actors (stop_movement_api before destroying).
struct cluster_door {
  cluster_door(services::movement_service& m, db::connection_pool& p,
               std::vector<api::api_key> key_list, std::function<int(const std::string&)> limiter,
               int max_sessions_per_key = 16);

  services::movement_service& movements;
  /// api_nonces (login replay protection).
  db::connection_pool& pool;
  std::map<std::string, api::api_key> keys;
  /// 0: go ahead (one token taken), else seconds until a token is back —
  /// the /v3 limiter, so HTTP and cluster calls share one bucket per key.
  /// Empty: no limit.
  std::function<int(const std::string& key_id)> rate_limit;
  std::atomic<long> logins_since_prune{0};
  /// Where sessions delegate subscribe/unsub; spawned by (and linked to)
  /// the movement_api actor before it takes its first login.
  event_fanout_actor fanout;
  /// The fan-out's live subscriber count, for movement_api's status.
  std::shared_ptr<std::atomic<uint64_t>> subscribers = std::make_shared<std::atomic<uint64_t>>(0);
  /// Live sessions per key (MG_CLUSTER_MAX_SESSIONS_PER_KEY); sessions
  /// count themselves out when they end.
  std::shared_ptr<session_counter> sessions;
};

/// MG_CLUSTER_ADDR split at the last ':' ("[::1]:4242" loses its brackets).
struct cluster_address {
  std::string host;
  uint16_t port = 0;
  bool loopback = false; // 127.0.0.0/8, ::1 or localhost
};

/// Throws std::invalid_argument naming MG_CLUSTER_ADDR when malformed.
cluster_address parse_cluster_address(const std::string& host_port);

/// The MG_CLUSTER_TLS_* files, when set.
std::optional<cluster::tls_files> cluster_tls_files(const config::settings& s);

/// Why `serve` must not open its cluster door ("" when it may), naming the
/// variable: a malformed MG_CLUSTER_ADDR, unusable TLS files, or a
/// non-loopback address without TLS (the actor protocol would travel in
/// clear text).
std::string cluster_door_refusal(const config::settings& s);

/// Spawns the movement_api actor (detached: logins touch PostgreSQL).
movement_api_actor spawn_movement_api(caf::actor_system& sys, std::shared_ptr<cluster_door> door);

/// Publishes `api` on `host_port` (port 0: any) and returns the bound port;
/// throws std::runtime_error naming MG_CLUSTER_ADDR on failure.
uint16_t publish_movement_api(caf::actor_system& sys, const movement_api_actor& api,
                              const std::string& host_port);

/// Unpublishes and stops `api` and every session (linked to it); waits up
/// to a few seconds for it to be gone.
void stop_movement_api(caf::actor_system& sys, movement_api_actor& api);

} // namespace mg::actors
