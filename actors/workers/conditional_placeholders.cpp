// Makers of the conditional workers not built yet: each is on by its flag
// but has no client, so it is skipped with its warning. A worker's own file
// replaces its line here.
#include "actors/workers/conditional_workers.hpp"

namespace mg::actors {

using ctx_ptr = const std::shared_ptr<workers::engine_context>&;

std::optional<worker_spec> evm_nonce_reaper_worker(ctx_ptr ctx) {
  if (!ctx->settings.evm_nonce_reaper_enabled)
    return std::nullopt;
  return skipped("evm_nonce_reaper", "an EVM RPC client and endpoints");
}

std::optional<worker_spec> ccip_stranded_reaper_worker(ctx_ptr ctx) {
  if (!ctx->settings.ccip_stranded_reaper_enabled)
    return std::nullopt;
  return skipped("ccip_stranded_reaper", "a CCIP client");
}

std::optional<worker_spec> capital_transfer_followup_worker(ctx_ptr ctx) {
  if (!ctx->settings.capital_transfer_followup_enabled)
    return std::nullopt;
  return skipped("capital_transfer_followup", "a capital-transfer client");
}

std::optional<worker_spec> notification_dispatcher_worker(ctx_ptr ctx) {
  if (!ctx->settings.notify_enabled)
    return std::nullopt;
  return skipped("notification_dispatcher", "a notification webhook");
}

std::optional<worker_spec> balance_history_rollup_worker(ctx_ptr ctx) {
  if (!ctx->settings.balance_history_enabled)
    return std::nullopt;
  return skipped("balance_history_rollup", "balance snapshots");
}

std::optional<worker_spec> cex_transfer_ingest_worker(ctx_ptr ctx) {
  if (ctx->settings.cex_transfer_ingest_venues_csv.empty())
    return std::nullopt;
  return skipped("cex_transfer_ingest", "venue clients");
}

std::optional<worker_spec> balance_snapshot_worker(ctx_ptr ctx) {
  if (!ctx->settings.balance_snapshot_enabled)
    return std::nullopt;
  return skipped("balance_snapshot", "balance fetchers");
}

std::optional<worker_spec> ccip_drift_worker(ctx_ptr ctx) {
  if (!ctx->settings.ccip_enabled)
    return std::nullopt;
  return skipped("ccip_drift", "a CCIP sidecar client");
}

std::optional<worker_spec> verify_drift_worker(ctx_ptr ctx) {
  if (!ctx->settings.verify_drift_enabled)
    return std::nullopt;
  return skipped("verify_drift", "chain RPC clients");
}

} // namespace mg::actors
