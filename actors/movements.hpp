#pragma once
// The movement actors: one per request with a reconcile pending (see
// actors/protocol.hpp), a registry that routes changes to them, and the small pool of reconcilers
// (detached, each with its own connection) that run their transactions.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/loop_runner.hpp"
#include "actors/protocol.hpp"
#include "actors/workers/engine.hpp"

namespace mg::actors {

/// How long a movement actor waits for its reconcile before giving up (the
/// sweep then picks the request up).
inline constexpr auto reconcile_timeout = std::chrono::seconds(30);

struct reconciler_state {
  static inline const char* name = "reconciler";
  std::unique_ptr<db::connection_slot> conn;
};

reconciler_actor::behavior_type
reconciler(reconciler_actor::stateful_pointer<reconciler_state> self,
           std::shared_ptr<workers::engine_context> ctx, std::string database_url,
           std::shared_ptr<runtime_links> links, bool wakeups);

struct movement_state {
  static inline const char* name = "movement";
  bool busy = false;
  bool dirty = false;
  long reconciles = 0;
};

movement_actor::behavior_type movement(movement_actor::stateful_pointer<movement_state> self,
                                       std::string request_id, reconciler_actor reconciler);

struct registry_state {
  static inline const char* name = "movement-registry";
  std::unordered_map<std::string, movement_actor> movements;
  std::unordered_map<caf::actor_addr, std::string> ids;
  long started = 0; // movement actors spawned since start
};

movement_registry_actor::behavior_type
movement_registry(movement_registry_actor::stateful_pointer<registry_state> self,
                  std::vector<reconciler_actor> reconcilers);

} // namespace mg::actors
