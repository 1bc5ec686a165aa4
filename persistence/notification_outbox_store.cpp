#include "persistence/notification_outbox_store.hpp"

#include <algorithm>
#include <chrono>

#include "config/log.hpp"
#include "domain/json_writer.hpp"
#include "persistence/db.hpp"
#include "persistence/notification_store.hpp"

namespace mg::db {

namespace {

/// A connection string that gives up connecting after `seconds` (libpq
/// waits for the TCP timeout otherwise), for URI and key=value forms.
std::string with_connect_timeout(const std::string& url, int seconds) {
  bool uri = url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0;
  auto param = "connect_timeout=" + std::to_string(seconds);
  if (uri)
    return url + (url.find('?') == std::string::npos ? "?" : "&") + param;
  return url + " " + param;
}

} // namespace

std::vector<notification_claim> claim_due_notifications(pqxx::connection& conn, int limit,
                                                        double lease_seconds) {
  // The body is built from stored columns only (created_at in UTC, fixed
  // format), so every claim of a row yields the same bytes.
  static const statement q{
      "mg_claim_notifications",
      "WITH picked AS ("
      "  SELECT id FROM notification_outbox"
      "  WHERE status = 'pending' AND next_attempt_at <= now()"
      "  ORDER BY created_at, id LIMIT $1"
      "  FOR UPDATE SKIP LOCKED)"
      " UPDATE notification_outbox o"
      " SET next_attempt_at = now() + make_interval(secs => $2)"
      " FROM picked WHERE o.id = picked.id"
      " RETURNING o.id, o.kind,"
      "   jsonb_build_object('notification_id', o.id, 'kind', o.kind, 'subject', o.subject,"
      "     'dedupe_key', o.dedupe_key,"
      "     'created_at', to_char(o.created_at AT TIME ZONE 'UTC',"
      "                           'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),"
      "     'data', o.payload)::text,"
      "   extract(epoch FROM o.created_at)::bigint, o.delivery_nonce, o.attempts,"
      "   o.next_attempt_at::text"};
  pqxx::work tx(conn);
  auto rows = exec(tx, q, limit, lease_seconds);
  tx.commit();
  std::vector<notification_claim> out;
  for (const auto& r : rows)
    out.push_back({r[0].as<long long>(), r[1].c_str(), r[2].c_str(), r[3].as<int64_t>(),
                   r[4].c_str(), r[5].as<int>(), r[6].c_str()});
  // RETURNING has no order: FIFO for the caller (ids grow with time).
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

int record_notification_outcomes(pqxx::connection& conn,
                                 const std::vector<notification_outcome>& outcomes,
                                 int max_attempts) {
  static const statement sent{
      "mg_notification_sent",
      "UPDATE notification_outbox SET status = 'sent', attempts = attempts + 1,"
      " sent_at = now(), last_error = NULL"
      " WHERE id = $1 AND status = 'pending' AND next_attempt_at = $2::timestamptz"};
  // attempts counts every attempt; backoff 2^min(attempts, 6) s (2, 4, … 64).
  // A dlq row keeps its last next_attempt_at (the column is NOT NULL).
  static const statement failed{
      "mg_notification_failed",
      "UPDATE notification_outbox SET attempts = attempts + 1, last_error = $3,"
      " status = CASE WHEN attempts + 1 >= $4 THEN 'dlq' ELSE 'pending' END,"
      " next_attempt_at = CASE WHEN attempts + 1 >= $4 THEN now()"
      "   ELSE now() + make_interval(secs => power(2, least(attempts + 1, 6))) END"
      " WHERE id = $1 AND status = 'pending' AND next_attempt_at = $2::timestamptz"};
  int changed = 0;
  pqxx::work tx(conn);
  for (const auto& o : outcomes) {
    auto r = o.delivered ? exec(tx, sent, o.id, o.lease)
                         : exec(tx, failed, o.id, o.lease, o.error, max_attempts);
    changed += static_cast<int>(r.affected_rows());
  }
  tx.commit();
  return changed;
}

void notify_callback_dlq(pqxx::transaction_base& tx, const std::string& outbox_id,
                         const std::string& event_id, const std::string& request_id,
                         const std::string& event_type, int attempts,
                         const std::string& last_error) {
  // The transition's time tells one dlq episode of the row from the next
  // (redeliver resets attempts, so they cannot).
  auto at = tx.exec("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint")[0][0];
  notification n{"callback_dlq", outbox_id, "callback_dlq:" + outbox_id + ":" + at.c_str(),
                 json::writer()
                     .begin_object()
                     .member("outbox_id", outbox_id)
                     .member("event_id", event_id)
                     .member("request_id", request_id)
                     .member("event_type", event_type)
                     .member("attempts", attempts)
                     .member("last_error", last_error)
                     .end_object()
                     .str()};
  enqueue_notification(tx, n);
}

void enqueue_core_group_failure(const std::string& database_url, const std::string& runtime_node,
                                const std::string& network_class, const std::string& worker,
                                const std::string& reason) {
  try {
    auto conn = connect(
        with_connect_timeout(with_application_name(database_url, "movegate:core_failure"), 5));
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
    // One fact per failing process incarnation: a node restarted under the
    // same MG_RUNTIME_NODE that fails again pages again.
    notification n{"core_group_failure", worker,
                   "core_group_failure:" + runtime_node + ":" + network_class + ":" +
                       std::to_string(ms),
                   json::writer()
                       .begin_object()
                       .member("runtime_node", runtime_node)
                       .member("network_class", network_class)
                       .member("worker", worker)
                       .member("reason", reason)
                       .end_object()
                       .str()};
    pqxx::work tx(*conn);
    enqueue_notification(tx, n);
    tx.commit();
  } catch (const std::exception& ex) {
    log::warn("could not enqueue the core_group_failure notification",
              {{"worker", worker}, {"error", ex.what()}});
  }
}

} // namespace mg::db
