#pragma once
// node_observer pass (reference §2): an unlocked snapshot of due
// SUBMITTED/OBSERVING nodes, then a per-node claim (node + request, SKIP
// LOCKED, miss-only savepoint) held through observe and its commit.
//
// One observer loop actor per process (SPEC names no setting for more);
// it observes several nodes at once through a fixed set of lane actors
// (MG_NODE_OBSERVE_CONCURRENCY - 1 of them, plus the observer itself),
// spawned once with the runtime. A pass deals each due node to exactly one
// lane, so no two lanes observe the same node in one round; across
// processes the SKIP LOCKED claim, held through observe, keeps it so.
#include <caf/all.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "actors/protocol.hpp"
#include "actors/workers/engine.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

/// The observer's lanes: detached actors, each with its own connection,
/// each claiming, observing and committing the nodes it is dealt (one
/// transaction per node). Stopped when the last owner lets go.
class observe_lanes {
public:
  observe_lanes(caf::actor_system& sys, std::shared_ptr<engine_context> ctx, int count);
  ~observe_lanes();
  observe_lanes(const observe_lanes&) = delete;
  observe_lanes& operator=(const observe_lanes&) = delete;

  size_t size() const { return lanes_.size(); }

  /// Deals shares[i] to lane i, runs `meanwhile` on the caller's thread,
  /// then merges the lanes' answers into `out` (which `meanwhile` may also
  /// write: the lanes' answers are merged only after it returned). A lane
  /// that failed or did not answer within `timeout` is named in the
  /// returned error text ("" when every lane answered).
  std::string run(const std::vector<std::vector<std::string>>& shares,
                  std::chrono::milliseconds timeout, pass_result& out,
                  const std::function<void()>& meanwhile);

private:
  caf::actor_system& sys_;
  std::vector<actors::observe_lane_actor> lanes_;
};

/// Observes up to the batch size of due nodes, on `conn` and, when given,
/// concurrently on the lanes too.
pass_result observe_pass(db::connection_slot& conn, const engine& e,
                         observe_lanes* lanes = nullptr);

} // namespace mg::workers
