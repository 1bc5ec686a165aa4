#include "actors/workers/reconcile_sweep.hpp"

#include "config/log.hpp"

namespace mg::workers {

void end_reconcile(pqxx::work& tx, const db::reconcile_outcome& outcome) {
  // Nothing written: the transaction only took row locks, and a COMMIT
  // would still write and flush a commit record for them.
  if (outcome.wrote)
    tx.commit();
  else
    tx.abort();
}

db::reconcile_outcome reconcile_one(pqxx::connection& conn, const engine& e,
                                    const std::string& request_id) {
  pqxx::work tx(conn);
  auto outcome = db::reconcile_request(tx, e.plans, request_id, e.reconcile_settings());
  end_reconcile(tx, outcome);
  return outcome;
}

pass_result reconcile_sweep_pass(db::connection_slot& conn, const engine& e) {
  pass_result out;
  std::vector<std::string> ids;
  {
    pqxx::nontransaction snapshot(conn.get());
    ids =
        db::reconcile_sweep_candidates(snapshot, e.settings.network_class,
                                       e.settings.unknown_escalate_seconds, reconcile_sweep_batch);
  }
  for (auto& id : ids) {
    pqxx::work tx(conn.get());
    if (!db::try_lock_request(tx, id)) {
      tx.abort();
      continue;
    }
    auto outcome = db::reconcile_request(tx, e.plans, id, e.reconcile_settings());
    end_reconcile(tx, outcome);
    if (outcome.changed) {
      ++out.processed;
      log::info("sweep reconciled request", {{"request_id", id}, {"state", outcome.request_state}});
    }
    out.wake_dispatcher |= outcome.activated > 0;
  }
  return out;
}

} // namespace mg::workers
