#pragma once
// The cluster's middleman connections (SPEC §8): every serve process dials
// the movement_api of each live peer in cluster_nodes and monitors it. A
// dropped connection is only reported — the database lease alone decides
// that a peer is dead — so the caller can look at the lease early.
#include <functional>
#include <string>

#include "actors/protocol.hpp"

namespace mg::actors {

struct peer_watch_config {
  std::string database_url;
  std::string runtime_node;   // this process (never dialled)
  double lease_seconds = 8;   // a peer past it is not dialled
  double refresh_seconds = 2; // how often cluster_nodes is read for new peers
};

struct peer_events {
  std::function<void(const std::string& runtime_node)> connected;
  std::function<void(const std::string& runtime_node)> lost;
};

/// Detached (it reads PostgreSQL); dials through CAF's OpenSSL module when
/// `sys` has it (cluster TLS), else the plain middleman. Peers registered
/// with a wildcard host (0.0.0.0, ::) cannot be dialled and are skipped.
peer_watch_actor spawn_peer_watch(caf::actor_system& sys, peer_watch_config cfg,
                                  peer_events events);

/// Stops it and waits (a few seconds at most) until it is gone.
void stop_peer_watch(caf::actor_system& sys, peer_watch_actor& watch);

} // namespace mg::actors
