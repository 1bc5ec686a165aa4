#include "actors/workers/balance_history_rollup.hpp"

#include "actors/workers/worker_table.hpp"
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

std::optional<worker_pass> build_balance_history_rollup(const worker_build& b) {
  int retention_days = b.ctx->settings.balance_retention_days;
  return [retention_days](db::connection_slot& c) {
    return workers::balance_history_pass(c, retention_days);
  };
}

} // namespace mg::actors
