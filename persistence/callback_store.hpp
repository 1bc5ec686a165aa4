#pragma once
// The callback outbox (SPEC §6): claiming due rows for delivery, recording
// each attempt's outcome, and the operator's list / redeliver.
//
// Claims are leases: a pass marks its rows busy by moving next_attempt_at
// past the longest possible delivery and commits before any HTTP is sent,
// so no row lock or transaction is held while a receiver is slow. The
// outcome is written only while that lease is still the row's
// (next_attempt_at unchanged), so a crash mid-send loses nothing: the row
// becomes due again when the lease runs out (at-least-once).
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace mg::db {

/// NOTIFY channel raised when pending outbox rows are committed.
inline constexpr const char* callback_channel = "mg_callback";

/// One outbox row as the dispatcher sends it.
struct callback_claim {
  std::string id;
  std::string event_id;
  std::string callback_url;
  std::string body; // payload as stored (jsonb text): identical on every attempt
  int64_t callback_timestamp = 0;
  std::string callback_nonce;
  int attempts = 0; // before this attempt
  int max_attempts = 0;
  std::string lease; // next_attempt_at set by the claim (exact text)
};

/// Claims up to `limit` pending rows that are due (next_attempt_at NULL or
/// past — filtered before the LIMIT, SPEC §6) of requests of
/// `network_class`, oldest first, FOR UPDATE SKIP LOCKED, and leases them
/// for `lease_seconds`. Commits its own transaction.
std::vector<callback_claim> claim_due_callbacks(pqxx::connection& conn,
                                                const std::string& network_class, int limit,
                                                double lease_seconds);

struct callback_outcome {
  std::string id;
  std::string lease;
  bool delivered = false;
  std::string error; // when !delivered: never carries a secret
};

/// Records the attempts of one pass in one transaction: delivered → sent;
/// failed → attempts + 1, last_error, next_attempt_at = now + 2^min(attempts, 6) s,
/// or dlq once attempts reach max_attempts. Outcomes whose lease moved on
/// are dropped. Returns how many rows it changed.
int record_callback_outcomes(pqxx::connection& conn, const std::vector<callback_outcome>& outcomes);

/// Seconds until the earliest pending row of `network_class` is due (0 when
/// one is due now), nullopt when none is pending.
std::optional<double> seconds_until_next_callback(pqxx::connection& conn,
                                                  const std::string& network_class);

/// The operator's view of one outbox row, as a JSON object.
struct callback_page {
  std::vector<std::string> items; // JSON objects
  std::string next_cursor;        // "" when this is the last page
};

/// Rows of `status` ("" = any) in (created_at, id) order after the row
/// `cursor` ("" = from the start); limit 1..200. A cursor that names no
/// row throws std::invalid_argument.
callback_page list_callbacks(pqxx::connection& conn, const std::string& status, int limit,
                             const std::string& cursor);

enum class redeliver_status { done, not_found, already_pending };

struct redeliver_result {
  redeliver_status status = redeliver_status::not_found;
  std::string row; // JSON object when done or already_pending
};

/// Puts a sent or dlq row back to pending with attempts 0 and no backoff,
/// keeping its event id, timestamp, nonce and body; wakes the dispatchers
/// and writes an audit row by `actor`. `id` must be a UUID.
redeliver_result redeliver_callback(pqxx::connection& conn, const std::string& id,
                                    const std::string& actor);

} // namespace mg::db
