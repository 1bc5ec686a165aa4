#pragma once
// The fetch and append shared by the balance_snapshot worker and GET
// /v3/balances?fresh=true: ask every balance fetcher, then append what each
// venue answered to balance_snapshots.
#include <string>
#include <vector>

#include "domain/balance_fetcher.hpp"
#include "persistence/balance_store.hpp"

namespace mg::services {

/// One venue's outcome: its balances, or why there are none.
struct venue_fetch {
  std::string venue_key;
  std::vector<domain::balance_amount> balances;
  std::string error; // "" when fetched (and, after store_balance_fetches, stored)
};

/// Asks every fetcher in turn, holding no database connection. A fetcher
/// that throws a std::exception is logged, counted
/// (movegate_balance_fetch_failures_total{venue}) and reported in its entry;
/// anything else escapes (the sidecar supervisor restarts the worker).
std::vector<venue_fetch> fetch_all_balances(const domain::balance_fetcher_registry& fetchers);

/// Appends every fetched venue under its own savepoint; a venue whose rows
/// cannot be written gets `error` set and leaves nothing behind, the others
/// are kept. Returns the rows appended.
int store_balance_fetches(pqxx::transaction_base& tx, std::vector<venue_fetch>& fetches);

} // namespace mg::services
