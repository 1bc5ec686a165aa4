#pragma once
// The reference's nine conditional workers, each gated by its own flag
// (reference "Always-on vs conditional"). The two reapers join the core
// fail-fast group, the rest are sidecars. A worker whose flag is on but
// whose client is not configured is skipped with one warning line, never
// half-started.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/loop_runner.hpp"
#include "actors/workers/engine.hpp"

namespace mg::actors {

using conditional_maker =
    std::optional<worker_spec> (*)(const std::shared_ptr<workers::engine_context>&);

/// The enabled and configured conditional workers, in the reference's order.
std::vector<worker_spec> conditional_workers(const std::shared_ptr<workers::engine_context>& ctx);

/// Logs the one warning line of a worker that is on but cannot run, and
/// returns nullopt (for makers: `return skipped("x", "a y client");`).
std::optional<worker_spec> skipped(const char* worker, const char* needs);

/// A loop policy with the process's jitter; `drain` as in the loop runner.
domain::loop_policy every(const config::settings& s, double interval_seconds, bool drain = true);

// One maker per worker, each in the worker's own file: nullopt when its
// flag is off (silently) or its client is missing (skipped() warns).
std::optional<worker_spec> evm_nonce_reaper_worker(const std::shared_ptr<workers::engine_context>&);
std::optional<worker_spec>
ccip_stranded_reaper_worker(const std::shared_ptr<workers::engine_context>&);
std::optional<worker_spec>
capital_transfer_followup_worker(const std::shared_ptr<workers::engine_context>&);
std::optional<worker_spec>
notification_dispatcher_worker(const std::shared_ptr<workers::engine_context>&);
std::optional<worker_spec>
balance_history_rollup_worker(const std::shared_ptr<workers::engine_context>&);
std::optional<worker_spec>
cex_transfer_ingest_worker(const std::shared_ptr<workers::engine_context>&);
std::optional<worker_spec> balance_snapshot_worker(const std::shared_ptr<workers::engine_context>&);
std::optional<worker_spec> ccip_drift_worker(const std::shared_ptr<workers::engine_context>&);
std::optional<worker_spec> verify_drift_worker(const std::shared_ptr<workers::engine_context>&);

} // namespace mg::actors
