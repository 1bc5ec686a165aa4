#include "persistence/bench_store.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "persistence/db.hpp"

namespace mg::db {

namespace {

bench_percentiles read_percentiles(pqxx::transaction_base& tx, const std::string& samples_sql,
                                   const std::string& prefix) {
  auto r = tx.exec_params("SELECT COALESCE(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), 0),"
                          " COALESCE(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms), 0),"
                          " count(*) FROM (" +
                              samples_sql + ") AS samples(ms)",
                          prefix);
  return {r[0][0].as<double>(), r[0][1].as<double>(), r[0][2].as<long>()};
}

} // namespace

bench_percentiles bench_approve_to_first_submit(pqxx::transaction_base& tx,
                                                const std::string& prefix) {
  return read_percentiles(
      tx,
      "SELECT extract(epoch FROM min(l.accepted_at) - min(e.occurred_at)) * 1000"
      " FROM movement_requests r"
      " JOIN movement_events e ON e.request_id = r.id AND e.event_type = 'request_approved'"
      " JOIN movement_request_nodes n ON n.request_id = r.id"
      " JOIN sim_ledger l ON l.node_id = n.id AND NOT l.fenced"
      " WHERE r.idempotency_key LIKE $1 GROUP BY r.id",
      prefix);
}

bench_percentiles bench_hop(pqxx::transaction_base& tx, const std::string& prefix) {
  // A proof artifact's answered_at (when the executor answered) where the
  // engine records one; otherwise the predecessor's COMPLETED event.
  return read_percentiles(
      tx,
      "SELECT extract(epoch FROM min(l.accepted_at) - max(COALESCE("
      "   (SELECT max((a.payload->>'answered_at')::timestamptz) FROM node_artifacts a"
      "    WHERE a.node_id = pn.id AND a.kind IN ('submit_proof', 'observe_proof')"
      "     AND a.payload->>'answered_at' ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T]'),"
      "   e.occurred_at))) * 1000"
      " FROM movement_requests r"
      " JOIN template_edges te ON te.template_key = r.template_key"
      "  AND te.version = r.template_version"
      " JOIN movement_request_nodes pn ON pn.request_id = r.id AND pn.node_key = te.from_key"
      " JOIN movement_events e ON e.request_id = r.id AND e.node_key = te.from_key"
      "  AND e.event_type = 'node_state_changed' AND e.payload->>'node_state' = 'COMPLETED'"
      " JOIN movement_request_nodes n ON n.request_id = r.id AND n.node_key = te.to_key"
      " JOIN sim_ledger l ON l.node_id = n.id AND NOT l.fenced"
      " WHERE r.idempotency_key LIKE $1 GROUP BY r.id, te.to_key",
      prefix);
}

bench_throughput bench_read_throughput(pqxx::transaction_base& tx, const std::string& prefix,
                                       const std::string& started_at) {
  auto r = tx.exec_params("SELECT count(*) FILTER (WHERE r.request_state = 'COMPLETED'),"
                          " extract(epoch FROM max(r.updated_at) -"
                          "  COALESCE(NULLIF($2, '')::timestamptz, min(e.occurred_at)))"
                          " FROM movement_requests r JOIN movement_events e ON e.request_id = r.id"
                          "  AND e.event_type = 'request_approved' WHERE r.idempotency_key LIKE $1",
                          prefix, started_at);
  bench_throughput out;
  out.completed = r[0][0].as<long>();
  out.seconds = r[0][1].is_null() ? 0 : r[0][1].as<double>();
  return out;
}

std::string bench_clock(pqxx::connection& c) {
  pqxx::nontransaction tx(c);
  return tx.exec("SELECT clock_timestamp()::text")[0][0].c_str();
}

long bench_count_settled(pqxx::transaction_base& tx, const std::string& prefix) {
  auto r = tx.exec_params("SELECT count(*) FROM movement_requests WHERE idempotency_key LIKE $1"
                          " AND request_state IN ('COMPLETED', 'FAILED', 'MANUAL_INTERVENTION')",
                          prefix);
  return r[0][0].as<long>();
}

server_counters read_server_counters(pqxx::connection& c) {
  {
    // This backend's own pending statistics, flushed when this statement's
    // transaction ends (PostgreSQL 15).
    pqxx::nontransaction tx(c);
    tx.exec("SELECT pg_stat_force_next_flush()");
  }
  // A new transaction: a statistics snapshot lasts for the transaction.
  pqxx::read_transaction tx(c);
  auto r = tx.exec("SELECT (SELECT wal_sync FROM pg_stat_wal),"
                   " (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()),"
                   " COALESCE((SELECT n_tup_upd FROM pg_stat_user_tables"
                   "  WHERE relid = 'movement_request_nodes'::regclass), 0),"
                   " COALESCE((SELECT n_tup_hot_upd FROM pg_stat_user_tables"
                   "  WHERE relid = 'movement_request_nodes'::regclass), 0)");
  server_counters out;
  out.wal_sync = r[0][0].as<long>();
  out.xact_commit = r[0][1].as<long>();
  out.node_updates = r[0][2].as<long>();
  out.node_hot_updates = r[0][3].as<long>();
  return out;
}

std::vector<int> other_client_backends(pqxx::connection& c) {
  pqxx::nontransaction tx(c);
  std::vector<int> pids;
  for (auto row : tx.exec("SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                          " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"))
    pids.push_back(row[0].as<int>());
  return pids;
}

bool wait_other_backends_gone(pqxx::connection& c, const std::vector<int>& present_before,
                              double cap_seconds) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<long>(cap_seconds * 1000));
  for (;;) {
    bool left = false;
    for (int pid : other_client_backends(c))
      left |= std::find(present_before.begin(), present_before.end(), pid) == present_before.end();
    if (!left)
      return true;
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void analyze_movement_tables(pqxx::connection& c) {
  pqxx::nontransaction tx(c);
  tx.exec("ANALYZE movement_requests, movement_request_nodes");
}

} // namespace mg::db
