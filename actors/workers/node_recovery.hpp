#pragma once
// node_recovery pass (reference §3 + SPEC §1): UNKNOWN nodes recovery may
// still act on and SUBMITTING nodes past the grace cutoff, in four lanes,
// resolved with executor.recover on the attempt's idempotency key; a key
// the provider has no record of is fenced and the node goes back to READY.
#include "actors/workers/engine.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

struct recovery_counts {
  int found = 0;
  int fenced = 0;
  int still_unknown = 0;
};

pass_result recovery_pass(db::connection_slot& conn, const engine& e,
                          recovery_counts* counts = nullptr);

} // namespace mg::workers
