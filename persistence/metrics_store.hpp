#pragma once
// What /metrics reads from PostgreSQL at scrape time, in one read-only
// transaction: rows by state, outbox depths, heartbeat ages and the recent
// dispatch/observe latencies (from movement_events).
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace mg::db {

struct labelled_value {
  std::string label;
  double value = 0;
};

struct heartbeat_age {
  std::string worker;
  std::string runtime_node;
  std::string group; // worker_heartbeats.worker_group: core or sidecar
  double age_seconds = 0;
  double consecutive_errors = 0;
};

/// p50/p95 of a latency over a recent window, with how many samples it saw.
struct latency_quantiles {
  std::optional<double> p50;
  std::optional<double> p95;
  long samples = 0;
};

struct metrics_snapshot {
  std::vector<labelled_value> requests_by_state;
  std::vector<labelled_value> nodes_by_state;
  std::vector<labelled_value> callbacks_by_status;
  std::vector<labelled_value> callback_attempts_by_status;
  double audit_outbox_pending = 0;
  std::vector<heartbeat_age> heartbeats; // this network class's workers
  // Oldest time in READY of the dispatchable READY nodes the FIFO head
  // holds (the first `age_scan_rows` in claim order), 0 when none.
  double oldest_ready_age_seconds = 0;
  // Age of the oldest pending callback that is due now (the first
  // `age_scan_rows` pending rows by age), 0 when none is due.
  double callback_lag_seconds = 0;
  double cluster_members_live = 0;
  double cluster_members_expired = 0; // lease expired, not yet taken over
  latency_quantiles dispatch;         // request_approved → its first SUBMITTING
  latency_quantiles observe;          // a node's SUBMITTED → COMPLETED
};

/// Seconds of history the latency quantiles cover.
constexpr int latency_window_seconds = 300;

/// Rows the age gauges look at per scrape, walked in index order, so a
/// scrape stays bounded however deep the backlog is.
constexpr int age_scan_rows = 1000;

/// Reads the snapshot (read-only; throws on database errors). A cluster
/// member whose row is older than `lease_seconds` counts as expired.
metrics_snapshot read_metrics(pqxx::connection& c, const std::string& network_class,
                              double lease_seconds);

} // namespace mg::db
