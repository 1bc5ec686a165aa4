#include "actors/workers/ccip_stranded_reaper.hpp"

#include <stdexcept>

#include "actors/workers/worker_table.hpp"
#include "config/log.hpp"
#include "persistence/ccip_store.hpp"

namespace mg::workers {

namespace {

std::vector<db::stranded_candidate> candidates(db::connection_slot& conn,
                                               const config::settings& s) {
  pqxx::read_transaction tx(conn.get());
  return db::stranded_ccip_candidates(tx, s.network_class, s.ccip_stranded_age_seconds,
                                      ccip_reaper_batch);
}

void log_reaped(const db::stranded_candidate& c, db::reap_outcome o) {
  bool sent = o == db::reap_outcome::sent_to_unknown;
  log::warn(sent ? "stranded CCIP send: node handed to recovery"
                 : "stranded CCIP send: node had moved on, operator notified",
            {{"intent_id", c.intent_id}, {"request_id", c.request_id}});
}

} // namespace

pass_result ccip_stranded_reaper_pass(db::connection_slot& conn, const config::settings& s,
                                      ccip_reap_counts* counts) {
  pass_result out;
  ccip_reap_counts local;
  auto& n = counts ? *counts : local;
  std::string first_error;
  int failed = 0;
  for (auto& c : candidates(conn, s)) {
    try {
      pqxx::work tx(conn.get());
      auto r = db::reap_stranded_ccip_intent(tx, c, s.ccip_stranded_age_seconds,
                                             s.callback_max_attempts);
      tx.commit();
      switch (r.outcome) {
      case db::reap_outcome::busy:
        ++n.busy;
        out.busy = true;
        continue;
      case db::reap_outcome::gone:
        continue;
      case db::reap_outcome::sent_to_unknown:
        ++n.sent_to_unknown;
        out.wake_recovery = true;
        break;
      case db::reap_outcome::stranded_only:
        ++n.stranded_only;
        break;
      }
      ++out.processed;
      if (r.needs_reconcile)
        out.reconcile.push_back(c.request_id);
      log_reaped(c, r.outcome);
    } catch (const std::exception& e) {
      if (db::is_connection_error(e))
        throw; // the loop reconnects; nothing of this intent landed
      // One bad intent must not stop the rest of the batch.
      ++failed;
      if (first_error.empty())
        first_error = e.what();
      log::error("stranded CCIP intent not reaped",
                 {{"intent_id", c.intent_id}, {"error", e.what()}});
    }
  }
  // Reaped items still get their hand-offs; with drain passes the failing
  // intent is retried at once, and that pass (reaping nothing) counts it.
  if (failed > 0 && out.processed == 0)
    throw std::runtime_error(std::to_string(failed) +
                             " stranded CCIP intent(s) not reaped: " + first_error);
  return out;
}

} // namespace mg::workers

namespace mg::actors {

std::optional<worker_pass> build_ccip_stranded_reaper(const worker_build& b) {
  return [ctx = b.ctx](db::connection_slot& c) {
    return workers::ccip_stranded_reaper_pass(c, ctx->settings);
  };
}

} // namespace mg::actors
