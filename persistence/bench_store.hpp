#pragma once
// What `movegate bench` reads back from PostgreSQL: latencies and throughput
// from the rows the run wrote, and the server's cumulative counters (WAL
// flushes, commits, HOT updates) around a phase.
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace mg::db {

struct bench_percentiles {
  double p50 = 0, p99 = 0;
  long samples = 0;
};

/// Approval event → first accepted submit in the sim ledger, per request
/// whose idempotency key is LIKE `prefix`.
bench_percentiles bench_approve_to_first_submit(pqxx::transaction_base& tx,
                                                const std::string& prefix);

/// Hop: the latest predecessor's executor answer → the successor's
/// accepted submit. The answer time is the predecessor's `answered_at`
/// where its proof artifact carries one, else its COMPLETED event.
bench_percentiles bench_hop(pqxx::transaction_base& tx, const std::string& prefix);

struct bench_throughput {
  long completed = 0;
  double seconds = 0; // `started_at` (else the first approval event) → last request update
};
bench_throughput bench_read_throughput(pqxx::transaction_base& tx, const std::string& prefix,
                                       const std::string& started_at = "");

/// The database's clock now, as timestamptz text (the rows are stamped by it).
std::string bench_clock(pqxx::connection& c);

/// Requests under `prefix` that the workers are done with.
long bench_count_settled(pqxx::transaction_base& tx, const std::string& prefix);

/// The server's cumulative counters a phase is measured by.
struct server_counters {
  long wal_sync = 0;     // pg_stat_wal: WAL flushes (fsyncs) of the whole server
  long xact_commit = 0;  // pg_stat_database, this database
  long node_updates = 0; // pg_stat_user_tables of movement_request_nodes
  long node_hot_updates = 0;
};

/// Reads the counters as the statistics collector has them: call it after
/// every other backend of the phase has exited (their statistics are
/// flushed at exit) — see wait_other_backends_gone.
server_counters read_server_counters(pqxx::connection& c);

/// The pids of the other client backends connected to this database now.
std::vector<int> other_client_backends(pqxx::connection& c);

/// Waits (up to `cap_seconds`) until no client backend of this database is
/// connected but this one and those in `present_before` (connections the
/// phase did not open). Returns whether none is left.
bool wait_other_backends_gone(pqxx::connection& c, const std::vector<int>& present_before,
                              double cap_seconds);

/// Refreshes the planner statistics of the movement tables: a fresh table
/// grows from empty faster than autovacuum re-analyzes it, and stale
/// statistics would give the claim queries a poor generic plan.
void analyze_movement_tables(pqxx::connection& c);

} // namespace mg::db
