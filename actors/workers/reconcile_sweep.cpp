#include "actors/workers/reconcile_sweep.hpp"

#include "actors/workers/node_result.hpp"
#include "config/log.hpp"
#include "persistence/db.hpp"

namespace mg::workers {

namespace {

/// The sweep's reconciles: all in one transaction (requests held elsewhere
/// are passed over); when that fails for anything but a deadlock, one
/// request per transaction, so a request that cannot be reconciled does not
/// hold the others back.
std::vector<db::reconcile_outcome> reconcile_batch(pqxx::connection& c, const engine& e,
                                                   const std::vector<std::string>& ids) {
  try {
    return write_results(c, e, {}, ids).reconciles;
  } catch (const pqxx::transaction_rollback&) {
    throw;
  } catch (const std::exception& ex) {
    if (ids.size() == 1 || db::is_connection_error(ex))
      throw;
    log::warn("sweep batch failed; reconciling its requests one by one", {{"error", ex.what()}});
  }
  std::vector<db::reconcile_outcome> out;
  for (auto& id : ids) {
    try {
      out.push_back(write_results(c, e, {}, {id}).reconciles.at(0));
    } catch (const pqxx::transaction_rollback&) {
      throw;
    } catch (const std::exception& ex) {
      if (db::is_connection_error(ex))
        throw;
      log::error("sweep could not reconcile request", {{"request_id", id}, {"error", ex.what()}});
      out.emplace_back();
    }
  }
  return out;
}

} // namespace

pass_result reconcile_sweep_pass(db::connection_slot& conn, const engine& e) {
  pass_result out;
  std::vector<std::string> ids;
  {
    pqxx::nontransaction snapshot(conn.get());
    ids =
        db::reconcile_sweep_candidates(snapshot, e.settings.network_class,
                                       e.settings.unknown_escalate_seconds, reconcile_sweep_batch);
  }
  if (ids.empty())
    return out;
  auto outcomes = reconcile_batch(conn.get(), e, ids);
  for (size_t i = 0; i < ids.size(); ++i) {
    auto& outcome = outcomes[i];
    if (outcome.changed) {
      ++out.processed;
      log::info("sweep reconciled request",
                {{"request_id", ids[i]}, {"state", domain::to_string(outcome.request_state)}});
    }
    out.wake_dispatcher |= outcome.activated > 0;
  }
  return out;
}

} // namespace mg::workers
