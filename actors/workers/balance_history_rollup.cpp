#include "actors/workers/balance_history_rollup.hpp"

#include "actors/workers/conditional_workers.hpp"
#include "persistence/balance_store.hpp"

namespace mg::workers {

pass_result balance_history_pass(db::connection_slot& conn, int retention_days) {
  pqxx::work tx(conn.get());
  pass_result out;
  out.processed = static_cast<int>(db::roll_up_balance_history(tx, retention_days));
  tx.commit();
  return out;
}

} // namespace mg::workers

namespace mg::actors {

std::optional<worker_spec>
balance_history_rollup_worker(const std::shared_ptr<workers::engine_context>& ctx) {
  auto& s = ctx->settings;
  if (!s.balance_history_enabled)
    return std::nullopt;
  int retention_days = s.balance_retention_days;
  // One pass covers every changed hour: nothing is left to drain.
  return worker_spec{"balance_history_rollup", worker_group::sidecar,
                     every(s, s.balance_history_interval_seconds, false),
                     [retention_days](db::connection_slot& c) {
                       return workers::balance_history_pass(c, retention_days);
                     }};
}

} // namespace mg::actors
