#pragma once
// balance_history_rollup (sidecar, MG_BALANCE_HISTORY_ENABLED default true,
// every MG_BALANCE_HISTORY_INTERVAL_SECONDS): rolls balance_snapshots into
// hourly balance_history rows (venue, asset, UTC hour, min/max/last amount,
// samples). Idempotent: a pass over unchanged snapshots writes nothing. It
// reads only the database, so it is never skipped for a missing client.
#include "actors/workers/engine.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

/// One rollup transaction; processed = history rows inserted or changed.
pass_result balance_history_pass(db::connection_slot& conn, int retention_days);

} // namespace mg::workers
