#pragma once
// balance_snapshot (reference §7; sidecar, MG_BALANCE_SNAPSHOT_ENABLED,
// every MG_BALANCE_SNAPSHOT_INTERVAL_SECONDS, skipped with a warning while
// MG_GATEWAY_API_URL is empty): every pass asks each balance fetcher of the
// registry, appends what it read to balance_snapshots (one savepoint per
// venue, so a venue that fails loses only its own rows), deletes snapshots
// past MG_BALANCE_RETENTION_DAYS and commits. A venue that keeps failing
// until its balance is stale (MG_BALANCE_STALE_THRESHOLD_SECONDS) is
// reported to operators once through notification_outbox. GET /v3/balances?fresh=true
// uses the same fetch and append.
#include <memory>
#include <string>
#include <vector>

#include "actors/workers/engine.hpp"
#include "actors/workers/worker_table.hpp"
#include "domain/balance_fetcher.hpp"
#include "persistence/connection_slot.hpp"
#include "services/balance_fetch.hpp"

namespace mg::workers {

/// One pass: fetch, append, retention, commit. processed = rows appended +
/// rows deleted. A failed venue whose newest snapshot is older than
/// `stale_threshold_seconds` (or that has none) gets one `balance_stale`
/// notification per stale episode. Throws after committing when no venue
/// could be stored, so the loop counts the error and the heartbeat shows it.
pass_result balance_snapshot_pass(db::connection_slot& conn,
                                  const domain::balance_fetcher_registry& fetchers,
                                  int retention_days, double stale_threshold_seconds);

} // namespace mg::workers

namespace mg::actors {

/// The balance_snapshot pass over `fetchers` (the maker passes the
/// registry built from settings; tests pass their own).
worker_pass balance_snapshot_over(const std::shared_ptr<workers::engine_context>& ctx,
                                  domain::balance_fetcher_registry fetchers);

} // namespace mg::actors
