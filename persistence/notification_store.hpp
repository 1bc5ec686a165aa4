#pragma once
// Writing operator notifications (notification_outbox): any worker or
// service that learns a fact an operator must hear about enqueues it in the
// transaction that records the fact.
#include <pqxx/pqxx>
#include <string>

namespace mg::db {

struct notification {
  std::string kind; // request_attention | callback_dlq | core_group_failure | registry_drift | ...
  std::string subject; // what it is about: a request id, a callback id, a worker, a baseline
  /// One row per fact: a second enqueue with the same key is a no-op.
  std::string dedupe_key;
  std::string payload_json = "{}";
};

/// True when the row was new.
bool enqueue_notification(pqxx::transaction_base& tx, const notification& n);

} // namespace mg::db
