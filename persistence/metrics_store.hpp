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
  double age_seconds = 0;
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
  latency_quantiles dispatch;            // request_approved → its first SUBMITTING
  latency_quantiles observe;             // a node's SUBMITTED → COMPLETED
};

/// Seconds of history the latency quantiles cover.
constexpr int latency_window_seconds = 300;

/// Reads the snapshot (read-only; throws on database errors).
metrics_snapshot read_metrics(pqxx::connection& c, const std::string& network_class);

} // namespace mg::db
