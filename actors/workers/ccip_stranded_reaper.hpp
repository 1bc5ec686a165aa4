#pragma once
// ccip_stranded_reaper (reference §11, core group): CCIP send intents still
// pending MG_CCIP_STRANDED_AGE_SECONDS after they were written are marked
// stranded, and their node — when it is still in flight on that attempt —
// goes UNKNOWN (CCIP_SEND_STRANDED, new claim token) so node_recovery asks
// the provider what happened. Two reapers reap an intent exactly once
// (SKIP LOCKED on the request, then the intent). Its only client is the
// database, so it is never skipped while its flag is on.
#include "actors/workers/engine.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

/// Intents looked at per pass (each reaped in its own transaction).
inline constexpr int ccip_reaper_batch = 20;

struct ccip_reap_counts {
  int sent_to_unknown = 0; // node handed to recovery
  int stranded_only = 0;   // node had moved on: the operator is told
  int busy = 0;            // request or intent locked elsewhere: next pass
};

pass_result ccip_stranded_reaper_pass(db::connection_slot& conn, const config::settings& s,
                                      ccip_reap_counts* counts = nullptr);

} // namespace mg::workers
