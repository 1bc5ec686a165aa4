#pragma once
// ccip_drift (reference §14): every MG_CCIP_DRIFT_POLL_INTERVAL_SECONDS it
// GETs {MG_CCIP_SIDECAR_URL}/v1/registry/drift (format:
// domain/ccip_drift_report.hpp) with bounded timeouts and a hard deadline,
// outside any transaction, then records every item in registry_drift
// (source 'ccip') in one transaction: drift is notified once per episode,
// recovery too. A sidecar that is down, answers non-200 or sends a
// malformed report fails the pass (logged, counted in the heartbeat, loop
// backoff) and nothing is written.
#include <string>

#include "actors/workers/engine.hpp"
#include "config/settings.hpp"
#include "persistence/connection_slot.hpp"
#include "persistence/drift_store.hpp"

namespace mg::workers {

/// connect/read/write timeout of one poll (the sidecar is local infrastructure).
inline constexpr double ccip_sidecar_timeout_seconds = 10;

/// One poll; processed = items recorded. Throws on a failed poll.
pass_result ccip_drift_pass(db::connection_slot& conn, const config::settings& s,
                            db::drift_record_counts* counts = nullptr,
                            double timeout_seconds = ccip_sidecar_timeout_seconds);

} // namespace mg::workers
