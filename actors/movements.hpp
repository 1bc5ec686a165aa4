#pragma once
// The movement actors: one per request with a reconcile pending (see
// actors/protocol.hpp), and a registry that routes changes to them and
// shards them over the request writers (actors/request_writer.hpp).
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/protocol.hpp"
#include "actors/workers/node_result.hpp"

namespace mg::actors {

/// How long a movement actor waits for its reconcile before giving up (the
/// sweep then picks the request up).
inline constexpr auto reconcile_timeout = std::chrono::seconds(30);
/// How long a node result may wait for its writer: the writer's own limit
/// for a held request, plus a flush.
inline constexpr auto result_timeout = reconcile_timeout + std::chrono::seconds(10);

struct movement_state {
  static inline const char* name = "movement";
  bool busy = false;
  bool dirty = false;
  int results_in_flight = 0; // handed to the writer, not answered yet
  long reconciles = 0;
  long results = 0; // node results the writer answered
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

/// The runtime's result sink: each result goes through the registry to its
/// request's movement actor and on to its shard's writer; the pass waits
/// for the answers, so it does not list those nodes again meanwhile.
class registry_sink : public workers::result_sink {
public:
  registry_sink(caf::actor_system& sys, movement_registry_actor registry)
      : sys_(sys), registry_(std::move(registry)) {}
  std::vector<std::optional<bool>>
  hand_over(const std::vector<std::shared_ptr<workers::handed_result>>& results) override;

private:
  caf::actor_system& sys_;
  movement_registry_actor registry_;
};

} // namespace mg::actors
