#include "services/balance_fetch.hpp"

#include "config/log.hpp"
#include "config/metrics.hpp"
#include "persistence/balance_store.hpp"
#include "persistence/db.hpp"

namespace mg::services {

namespace {

void count_failure(const std::string& venue_key, const std::string& error) {
  metrics::registry::global()
      .get_counter("movegate_balance_fetch_failures_total",
                   "Balance fetches that failed or could not be stored, per venue.",
                   {{"venue", venue_key}})
      .inc();
  log::warn("balance fetch failed", {{"venue", venue_key}, {"error", error}});
}

} // namespace

std::vector<venue_fetch> fetch_all_balances(const domain::balance_fetcher_registry& fetchers) {
  std::vector<venue_fetch> out;
  for (auto& f : fetchers) {
    venue_fetch v{f->venue_key(), {}, {}};
    try {
      v.balances = f->fetch();
      if (v.balances.empty())
        v.error = "the venue reported no balances";
    } catch (const std::exception& e) {
      v.balances.clear();
      v.error = e.what();
    }
    if (!v.error.empty())
      count_failure(v.venue_key, v.error);
    out.push_back(std::move(v));
  }
  return out;
}

int store_balance_fetches(pqxx::transaction_base& tx, std::vector<venue_fetch>& fetches) {
  int stored = 0;
  for (auto& v : fetches) {
    if (!v.error.empty())
      continue;
    try {
      db::append_venue_snapshots(tx, v.venue_key, v.balances);
      stored += static_cast<int>(v.balances.size());
    } catch (const std::exception& e) {
      if (db::is_connection_error(e))
        throw; // nothing can be stored: the pass fails as a whole
      // e.g. an amount beyond numeric's range: only this venue is lost.
      v.error = std::string("not stored: ") + e.what();
      count_failure(v.venue_key, v.error);
    }
  }
  return stored;
}

} // namespace mg::services
