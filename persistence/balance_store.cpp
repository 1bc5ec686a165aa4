#include "persistence/balance_store.hpp"

#include "persistence/db.hpp"

namespace mg::db {

void append_venue_snapshots(pqxx::transaction_base& tx, const std::string& venue_key,
                            const std::vector<balance_amount>& balances) {
  static const statement insert{
      "mg_append_balance_snapshot",
      "INSERT INTO balance_snapshots (venue_key, asset, amount) VALUES ($1, $2, $3::numeric)"};
  // Plain SQL savepoints: libpqxx 6.4.5's subtransaction never sends its
  // SAVEPOINT before exec_prepared (DESIGN "facts that bite").
  tx.exec("SAVEPOINT balance_venue");
  try {
    for (auto& b : balances)
      exec(tx, insert, venue_key, b.asset, b.amount);
  } catch (...) {
    tx.exec("ROLLBACK TO SAVEPOINT balance_venue");
    tx.exec("RELEASE SAVEPOINT balance_venue");
    throw;
  }
  tx.exec("RELEASE SAVEPOINT balance_venue");
}

std::vector<latest_balance> latest_balances(pqxx::transaction_base& tx,
                                            double stale_threshold_seconds) {
  // A skip scan over balance_snapshots_latest: one index probe per pair
  // instead of reading every retained snapshot.
  static const statement q{
      "mg_latest_balances",
      "WITH RECURSIVE pairs AS ("
      "  (SELECT venue_key, asset FROM balance_snapshots ORDER BY venue_key, asset LIMIT 1)"
      "  UNION ALL"
      "  SELECT n.venue_key, n.asset FROM pairs p CROSS JOIN LATERAL ("
      "    SELECT venue_key, asset FROM balance_snapshots s"
      "    WHERE (s.venue_key, s.asset) > (p.venue_key, p.asset)"
      "    ORDER BY venue_key, asset LIMIT 1) n)"
      " SELECT p.venue_key, p.asset, l.amount::text,"
      "  to_char(l.fetched_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),"
      "  l.fetched_at < clock_timestamp() - make_interval(secs => $1::float8)"
      " FROM pairs p CROSS JOIN LATERAL ("
      "  SELECT amount, fetched_at FROM balance_snapshots s"
      "  WHERE s.venue_key = p.venue_key AND s.asset = p.asset"
      "  ORDER BY fetched_at DESC, id DESC LIMIT 1) l"
      " ORDER BY p.venue_key, p.asset"};
  std::vector<latest_balance> out;
  for (auto r : exec(tx, q, stale_threshold_seconds))
    out.push_back({r[0].c_str(), r[1].c_str(), r[2].c_str(), r[3].c_str(), r[4].as<bool>()});
  return out;
}

venue_freshness venue_freshness_of(pqxx::transaction_base& tx, const std::string& venue_key,
                                   double stale_threshold_seconds) {
  static const statement q{
      "mg_balance_venue_freshness",
      "SELECT to_char(max(fetched_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),"
      "  coalesce(max(fetched_at) < clock_timestamp() - make_interval(secs => $2::float8), true)"
      " FROM balance_snapshots WHERE venue_key = $1"};
  auto r = exec(tx, q, venue_key, stale_threshold_seconds);
  return {str(r[0][0]), r[0][1].as<bool>()};
}

long delete_expired_snapshots(pqxx::transaction_base& tx, int retention_days) {
  static const statement q{
      "mg_delete_expired_balance_snapshots",
      "DELETE FROM balance_snapshots s"
      " WHERE s.fetched_at < clock_timestamp() - make_interval(days => $1::int)"
      "   AND EXISTS (SELECT 1 FROM balance_snapshots n"
      "     WHERE n.venue_key = s.venue_key AND n.asset = s.asset"
      "       AND (n.fetched_at, n.id) > (s.fetched_at, s.id))"};
  return static_cast<long>(exec(tx, q, retention_days).affected_rows());
}

long roll_up_balance_history(pqxx::transaction_base& tx, int retention_days) {
  // Snapshots are stamped with the database clock when appended, so only
  // the hours since the last rollup can change; the hour before the newest
  // rolled one is recomputed too, for rows committed late across the hour.
  // The oldest hour retention has reached is left alone: recomputing it
  // from what is left would shrink its sample count.
  static const statement q{
      "mg_roll_up_balance_history",
      "WITH bounds AS ("
      "  SELECT greatest("
      "    date_trunc('hour', clock_timestamp() - make_interval(days => $1::int), 'UTC')"
      "      + interval '1 hour',"
      "    coalesce((SELECT max(hour) FROM balance_history) - interval '1 hour',"
      "             '-infinity'::timestamptz)) AS since),"
      " agg AS ("
      "  SELECT venue_key, asset, date_trunc('hour', fetched_at, 'UTC') AS hour,"
      "    min(amount) AS min_amount, max(amount) AS max_amount,"
      "    (array_agg(amount ORDER BY fetched_at DESC, id DESC))[1] AS last_amount,"
      "    count(*)::int AS samples, max(fetched_at) AS last_fetched_at"
      "  FROM balance_snapshots, bounds WHERE fetched_at >= bounds.since"
      "  GROUP BY 1, 2, 3)"
      " INSERT INTO balance_history AS h (venue_key, asset, hour, min_amount, max_amount,"
      "   last_amount, samples, last_fetched_at)"
      " SELECT venue_key, asset, hour, min_amount, max_amount, last_amount, samples,"
      "   last_fetched_at FROM agg"
      " ON CONFLICT (venue_key, asset, hour) DO UPDATE SET"
      "   min_amount = EXCLUDED.min_amount, max_amount = EXCLUDED.max_amount,"
      "   last_amount = EXCLUDED.last_amount, samples = EXCLUDED.samples,"
      "   last_fetched_at = EXCLUDED.last_fetched_at, updated_at = clock_timestamp()"
      " WHERE (h.min_amount, h.max_amount, h.last_amount, h.samples, h.last_fetched_at)"
      "   IS DISTINCT FROM (EXCLUDED.min_amount, EXCLUDED.max_amount, EXCLUDED.last_amount,"
      "                     EXCLUDED.samples, EXCLUDED.last_fetched_at)"
      " RETURNING 1"};
  return static_cast<long>(exec(tx, q, retention_days).size());
}

} // namespace mg::db
