#include "actors/workers/conditional_workers.hpp"

#include "config/log.hpp"

namespace mg::actors {

std::optional<worker_spec> skipped(const char* worker, const char* needs) {
  log::warn("conditional worker skipped: its client is not configured",
            {{"worker", worker}, {"needs", needs}});
  return std::nullopt;
}

domain::loop_policy every(const config::settings& s, double interval_seconds, bool drain) {
  return domain::loop_policy{interval_seconds, s.worker_jitter_seconds, drain};
}

std::vector<worker_spec> conditional_workers(const std::shared_ptr<workers::engine_context>& ctx) {
  static const conditional_maker makers[] = {
      evm_nonce_reaper_worker,
      ccip_stranded_reaper_worker,
      capital_transfer_followup_worker,
      notification_dispatcher_worker,
      balance_history_rollup_worker,
      cex_transfer_ingest_worker,
      balance_snapshot_worker,
      ccip_drift_worker,
      verify_drift_worker,
  };
  std::vector<worker_spec> specs;
  for (auto make : makers)
    if (auto spec = make(ctx))
      specs.push_back(std::move(*spec));
  return specs;
}

} // namespace mg::actors
