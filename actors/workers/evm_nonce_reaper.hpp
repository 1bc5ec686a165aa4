#pragma once
// evm_nonce_reaper (reference §10; conditional, core fail-fast group): a
// preparer that died before its node reached SUBMITTING must not strand a
// nonce (every later transfer of that sender would wait behind the gap), and
// a nonce whose transaction may be on chain is released only once the chain
// shows it used.
#include <map>
#include <string>

#include "actors/workers/engine.hpp"
#include "executors/evm_rpc.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

struct nonce_reaper_counts {
  int reclaimed = 0; // stale reservations freed for reuse
  int consumed = 0;  // broadcast or fence nonces the chain shows used
};

/// One pass: frees `reserved` rows older than `stale_seconds` whose node never
/// reached SUBMITTING with that attempt, then releases open broadcasts whose
/// nonce the chain's latest transaction count has passed. A chain that does
/// not answer is skipped this pass (counted in errors by the loop only when
/// every chain failed).
pass_result evm_nonce_reaper_pass(db::connection_slot& conn,
                                  const std::map<std::uint64_t, executors::evm_rpc>& chains,
                                  double stale_seconds, nonce_reaper_counts* counts = nullptr);

} // namespace mg::workers
