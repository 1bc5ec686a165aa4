#pragma once
// The delivery side of notification_outbox (the enqueue side is
// notification_store.hpp), with the callback outbox's discipline: a claim
// leases due rows (next_attempt_at moves past the longest possible
// attempt) and commits before any HTTP is sent; the outcome is written in
// a second transaction only while that lease is still the row's, so a
// process killed mid-send loses nothing and two dispatchers never send the
// same row inside one lease.
#include <cstdint>
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace mg::db {

/// One claimed row as the dispatcher sends it.
struct notification_claim {
  long long id = 0;
  std::string kind;
  std::string body;      // the JSON document POSTed: the same bytes on every attempt
  int64_t timestamp = 0; // v3 signing: the row's creation second
  std::string nonce;     // v3 signing: fixed at enqueue
  int attempts = 0;      // before this attempt
  std::string lease;     // next_attempt_at set by the claim (exact text)
};

/// Claims up to `limit` pending rows that are due, oldest first, FOR UPDATE
/// SKIP LOCKED, and leases them for `lease_seconds`. Commits its own
/// transaction.
std::vector<notification_claim> claim_due_notifications(pqxx::connection& conn, int limit,
                                                        double lease_seconds);

struct notification_outcome {
  long long id = 0;
  std::string lease;
  bool delivered = false;
  std::string error; // when !delivered: never carries a secret
};

/// Records the attempts of one pass in one transaction: delivered → sent;
/// failed → attempts + 1, last_error, next_attempt_at = now +
/// 2^min(attempts, 6) s, or dlq once attempts reach `max_attempts`.
/// Outcomes whose lease moved on are dropped. Returns the rows changed.
int record_notification_outcomes(pqxx::connection& conn,
                                 const std::vector<notification_outcome>& outcomes,
                                 int max_attempts);

/// In the transaction that moved callback outbox row `outbox_id` to dlq:
/// enqueues callback_dlq (one per dlq transition: a redelivered row that
/// reaches the DLQ again is a new fact).
void notify_callback_dlq(pqxx::transaction_base& tx, const std::string& outbox_id,
                         const std::string& event_id, const std::string& request_id,
                         const std::string& event_type, int attempts,
                         const std::string& last_error);

/// Best effort, on a fresh connection of its own (the process is about to
/// exit 1): enqueues core_group_failure naming the failed worker. Never
/// throws; a database that is down is logged and the exit goes on.
void enqueue_core_group_failure(const std::string& database_url, const std::string& runtime_node,
                                const std::string& network_class, const std::string& worker,
                                const std::string& reason);

} // namespace mg::db
