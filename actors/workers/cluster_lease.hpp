#pragma once
// cluster_lease pass (SPEC §8): renews this process's database lease and
// takes over the claimed work of processes whose lease expired, waking
// node_recovery at once when it took some. Peers whose connection dropped
// (suspects) are looked at again the moment their lease runs out instead of
// at the next interval.
#include <string>

#include "actors/workers/engine.hpp"
#include "actors/workers/suspect_peers.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

/// When this process's lease row is gone (a survivor declared it dead and
/// took its work) the pass reports it as `fatal`: the worker ends, and as a
/// core worker it stops the process with exit code 1 instead of working on
/// claims that are no longer its own.
pass_result cluster_lease_pass(db::connection_slot& conn, const engine& e, suspect_peers& suspects);

} // namespace mg::workers
