#include "actors/workers/balance_snapshot.hpp"

#include <stdexcept>

#include "actors/workers/worker_table.hpp"
#include "config/log.hpp"
#include "domain/json_writer.hpp"
#include "executors/balance_fetchers.hpp"
#include "persistence/db.hpp"
#include "persistence/notification_store.hpp"

namespace mg::workers {

namespace {

/// A venue that failed and has no fresh snapshot left needs an operator:
/// one notification per stale episode (keyed by its last stored snapshot),
/// not one per pass.
void notify_stale_venues(pqxx::transaction_base& tx,
                         const std::vector<services::venue_fetch>& fetches,
                         double stale_threshold_seconds) {
  for (auto& v : fetches) {
    if (v.error.empty())
      continue;
    auto f = db::venue_freshness_of(tx, v.venue_key, stale_threshold_seconds);
    if (!f.stale)
      continue;
    db::enqueue_notification(tx, {"balance_stale", "venue:" + v.venue_key,
                                  "balance_stale:" + v.venue_key + ":" +
                                      (f.last_fetched_at.empty() ? "never" : f.last_fetched_at),
                                  json::writer()
                                      .begin_object()
                                      .member("venue_key", v.venue_key)
                                      .member_or_null("last_fetched_at", f.last_fetched_at)
                                      .member("error", v.error)
                                      .end_object()
                                      .str()});
  }
}

} // namespace

pass_result balance_snapshot_pass(db::connection_slot& conn,
                                  const domain::balance_fetcher_registry& fetchers,
                                  int retention_days, double stale_threshold_seconds) {
  auto fetches = services::fetch_all_balances(fetchers);
  pqxx::work tx(conn.get());
  int stored = services::store_balance_fetches(tx, fetches);
  notify_stale_venues(tx, fetches, stale_threshold_seconds);
  long deleted = db::delete_expired_snapshots(tx, retention_days);
  tx.commit();
  pass_result out;
  out.processed = stored + static_cast<int>(deleted);
  std::string errors;
  int failed = 0;
  for (auto& v : fetches)
    if (!v.error.empty()) {
      ++failed;
      errors += (errors.empty() ? "" : "; ") + v.venue_key + ": " + v.error;
    }
  if (failed > 0 && failed == static_cast<int>(fetches.size()))
    throw std::runtime_error("no balance could be stored: " + errors);
  return out;
}

} // namespace mg::workers

namespace mg::actors {

worker_pass balance_snapshot_over(const std::shared_ptr<workers::engine_context>& ctx,
                                  domain::balance_fetcher_registry fetchers) {
  auto& s = ctx->settings;
  int retention_days = s.balance_retention_days;
  double stale = s.balance_stale_threshold_seconds;
  return [fetchers = std::move(fetchers), retention_days, stale](db::connection_slot& c) {
    return workers::balance_snapshot_pass(c, fetchers, retention_days, stale);
  };
}

std::optional<worker_pass> build_balance_snapshot(const worker_build& b) {
  auto& s = b.ctx->settings;
  if (s.gateway_api_url.empty())
    return skipped("balance_snapshot", "a gateway API (MG_GATEWAY_API_URL)");
  try {
    return balance_snapshot_over(b.ctx, executors::make_balance_fetchers(s));
  } catch (const std::invalid_argument&) {
    return skipped("balance_snapshot", "an http(s) MG_GATEWAY_API_URL");
  }
}

} // namespace mg::actors
