#pragma once
// executor_health pass (reference §6): health() of every in-memory
// executor and signer, persisted per (key, runtime node). Implemented and
// up → 'up'; an exception or not up → 'down'; not implemented → the stored
// state stays ('unknown' for a new row). Sole writer of
// observed_signer_address: a valid nonzero address is stored lower-cased,
// anything else ignored; signers of this process no longer in memory go
// 'orphan' with the observation cleared. Never writes the expected identity.
#include <string>

#include "actors/workers/engine.hpp"
#include "domain/executor.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

struct health_counts {
  int up = 0;
  int down = 0;
  int unknown = 0;
  int orphaned = 0;
};

/// Providers are called before the transaction opens: a slow health()
/// never holds a lock.
pass_result executor_health_pass(db::connection_slot& conn,
                                 const domain::provider_registry& providers,
                                 const std::string& runtime_node, health_counts* counts = nullptr);

} // namespace mg::workers
