#pragma once
// balance_snapshots and balance_history (migration 0006): appending what the
// balance fetchers read, the latest row per venue and asset, retention, and
// the hourly rollup. Amounts travel as decimal strings and are numeric in SQL.
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "domain/balance_fetcher.hpp"

namespace mg::db {

using domain::balance_amount;

/// Appends one venue's balances inside a savepoint: all rows or none. On a
/// failure the savepoint is rolled back (the outer transaction stays usable
/// for the other venues) and the error is rethrown.
void append_venue_snapshots(pqxx::transaction_base& tx, const std::string& venue_key,
                            const std::vector<balance_amount>& balances);

struct latest_balance {
  std::string venue_key;
  std::string asset;
  std::string amount;     // as stored
  std::string fetched_at; // ISO 8601 UTC
  bool stale = false;     // older than the threshold when read
};

/// The newest snapshot of every (venue_key, asset), ordered by both;
/// `stale` when it is older than `stale_threshold_seconds` at read time.
std::vector<latest_balance> latest_balances(pqxx::transaction_base& tx,
                                            double stale_threshold_seconds);

/// When `venue_key` last stored a snapshot ("" when never) and whether
/// that is older than `stale_threshold_seconds` (true when never).
struct venue_freshness {
  std::string last_fetched_at; // ISO 8601 UTC, "" when never
  bool stale = true;
};
venue_freshness venue_freshness_of(pqxx::transaction_base& tx, const std::string& venue_key,
                                   double stale_threshold_seconds);

/// Deletes snapshots older than `retention_days`, except the newest one of
/// each (venue_key, asset), so a venue that stopped answering still shows
/// (as stale) instead of vanishing. Returns the rows deleted.
long delete_expired_snapshots(pqxx::transaction_base& tx, int retention_days);

/// Recomputes the hourly balance_history rows (min, max, last amount,
/// sample count per venue, asset and UTC hour) of the hours that can have
/// changed since the last rollup: from the hour before the newest rolled
/// hour on, and never an hour retention has started to delete. A row whose
/// values did not change is not written. Returns the rows inserted or
/// changed (0 when re-run on the same snapshots).
long roll_up_balance_history(pqxx::transaction_base& tx, int retention_days);

} // namespace mg::db
