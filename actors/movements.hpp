#pragma once
// The movement actors: one per request with a reconcile pending (see
// actors/protocol.hpp), and a registry that routes changes to them and
// shards them over the request writers (actors/request_writer.hpp).
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/protocol.hpp"

namespace mg::actors {

/// How long a movement actor waits for its reconcile before giving up (the
/// sweep then picks the request up).
inline constexpr auto reconcile_timeout = std::chrono::seconds(30);

struct movement_state {
  static inline const char* name = "movement";
  bool busy = false;
  bool dirty = false;
  long reconciles = 0;
};

movement_actor::behavior_type movement(movement_actor::stateful_pointer<movement_state> self,
                                       std::string request_id, request_writer_actor writer);

struct registry_state {
  static inline const char* name = "movement-registry";
  std::unordered_map<std::string, movement_actor> movements;
  std::unordered_map<caf::actor_addr, std::string> ids;
  long started = 0; // movement actors spawned since start
};

movement_registry_actor::behavior_type
movement_registry(movement_registry_actor::stateful_pointer<registry_state> self,
                  std::vector<request_writer_actor> writers);

} // namespace mg::actors
