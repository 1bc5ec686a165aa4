#include "persistence/callback_store.hpp"

#include <algorithm>
#include <stdexcept>

#include "domain/json_writer.hpp"
#include "persistence/audit_store.hpp"
#include "persistence/db.hpp"
#include "persistence/notification_outbox_store.hpp"

namespace mg::db {

namespace {

/// The operator's columns of a row (alias o), as one JSON object.
constexpr const char* row_json =
    "json_build_object('id', o.id, 'event_id', o.event_id, 'request_id', o.request_id,"
    " 'event_type', o.event_type, 'status', o.status, 'attempts', o.attempts,"
    " 'max_attempts', o.max_attempts, 'next_attempt_at', o.next_attempt_at,"
    " 'last_error', o.last_error, 'created_at', o.created_at, 'sent_at', o.sent_at)::text";

} // namespace

std::vector<callback_claim> claim_due_callbacks(pqxx::connection& conn,
                                                const std::string& network_class, int limit,
                                                double lease_seconds) {
  // The due filter comes before the LIMIT (SPEC §6: no head-of-line
  // blocking); only the outbox rows are locked, never the requests.
  static const statement q{
      "mg_claim_callbacks",
      "WITH picked AS ("
      "  SELECT o.id FROM movement_callback_outbox o"
      "  JOIN movement_requests r ON r.id = o.request_id"
      "  WHERE o.status = 'pending'"
      "    AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= now())"
      "    AND r.network_class = $1"
      "  ORDER BY o.created_at LIMIT $2"
      "  FOR UPDATE OF o SKIP LOCKED)"
      " UPDATE movement_callback_outbox o"
      " SET next_attempt_at = now() + make_interval(secs => $3)"
      " FROM picked WHERE o.id = picked.id"
      " RETURNING o.id, o.event_id, o.callback_url, o.payload::text, o.callback_timestamp,"
      "   o.callback_nonce, o.attempts, o.max_attempts, o.next_attempt_at::text, o.created_at"};
  pqxx::work tx(conn);
  auto rows = exec(tx, q, network_class, limit, lease_seconds);
  tx.commit();
  std::vector<std::pair<std::string, callback_claim>> ordered;
  for (const auto& r : rows) {
    callback_claim c;
    c.id = r[0].c_str();
    c.event_id = r[1].c_str();
    c.callback_url = r[2].c_str();
    c.body = r[3].c_str();
    c.callback_timestamp = r[4].as<int64_t>();
    c.callback_nonce = r[5].c_str();
    c.attempts = r[6].as<int>();
    c.max_attempts = r[7].as<int>();
    c.lease = r[8].c_str();
    ordered.emplace_back(r[9].c_str(), std::move(c));
  }
  // RETURNING has no order: keep FIFO for the caller (ISO text sorts by time).
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<callback_claim> out;
  for (auto& [_, c] : ordered)
    out.push_back(std::move(c));
  return out;
}

int record_callback_outcomes(pqxx::connection& conn,
                             const std::vector<callback_outcome>& outcomes) {
  static const statement sent{
      "mg_callback_sent",
      "UPDATE movement_callback_outbox SET status = 'sent', attempts = attempts + 1,"
      " sent_at = now(), next_attempt_at = NULL"
      " WHERE id = $1 AND status = 'pending' AND next_attempt_at = $2::timestamptz"};
  // attempts counts every attempt; backoff 2^min(attempts, 6) s (2, 4, … 64).
  static const statement failed{
      "mg_callback_failed",
      "UPDATE movement_callback_outbox SET attempts = attempts + 1, last_error = $3,"
      " status = CASE WHEN attempts + 1 >= max_attempts THEN 'dlq' ELSE 'pending' END,"
      " next_attempt_at = CASE WHEN attempts + 1 >= max_attempts THEN NULL"
      "   ELSE now() + make_interval(secs => power(2, least(attempts + 1, 6))) END"
      " WHERE id = $1 AND status = 'pending' AND next_attempt_at = $2::timestamptz"
      " RETURNING status, event_id, request_id, event_type, attempts, last_error"};
  int changed = 0;
  pqxx::work tx(conn);
  for (const auto& o : outcomes) {
    auto r = o.delivered ? exec(tx, sent, o.id, o.lease) : exec(tx, failed, o.id, o.lease, o.error);
    changed += static_cast<int>(r.affected_rows());
    if (!o.delivered && !r.empty() && std::string(r[0][0].c_str()) == "dlq")
      notify_callback_dlq(tx, o.id, r[0][1].c_str(), r[0][2].c_str(), r[0][3].c_str(),
                          r[0][4].as<int>(), r[0][5].c_str());
  }
  tx.commit();
  return changed;
}

std::optional<double> seconds_until_next_callback(pqxx::connection& conn,
                                                  const std::string& network_class) {
  static const statement q{
      "mg_next_callback_due",
      "SELECT greatest(0, extract(epoch FROM min(coalesce(o.next_attempt_at, now())) - now()))"
      " FROM movement_callback_outbox o JOIN movement_requests r ON r.id = o.request_id"
      " WHERE o.status = 'pending' AND r.network_class = $1"};
  pqxx::work tx(conn);
  auto r = exec(tx, q, network_class);
  tx.commit();
  if (r.empty() || r[0][0].is_null())
    return std::nullopt;
  return r[0][0].as<double>();
}

callback_page list_callbacks(pqxx::connection& conn, const std::string& status, int limit,
                             const std::string& cursor) {
  static const statement q{"mg_list_callbacks",
                           std::string("SELECT ") + row_json +
                               ", o.id FROM movement_callback_outbox o"
                               " WHERE ($1 = '' OR o.status = $1)"
                               "   AND ($2::uuid IS NULL OR (o.created_at, o.id) >"
                               "        (SELECT c.created_at, c.id FROM movement_callback_outbox c "
                               "WHERE c.id = $2::uuid))"
                               " ORDER BY o.created_at, o.id LIMIT $3"};
  static const statement exists{"mg_callback_exists",
                                "SELECT 1 FROM movement_callback_outbox WHERE id = $1::uuid"};
  pqxx::work tx(conn);
  if (!cursor.empty() && exec(tx, exists, cursor).empty())
    throw std::invalid_argument("cursor names no callback");
  auto rows = exec(tx, q, status, null_if_empty(cursor), limit + 1);
  tx.commit();
  callback_page page;
  for (const auto& r : rows) {
    if (static_cast<int>(page.items.size()) == limit) {
      page.next_cursor = rows[limit - 1][1].c_str();
      break;
    }
    page.items.push_back(r[0].c_str());
  }
  return page;
}

redeliver_result redeliver_callback(pqxx::connection& conn, const std::string& id,
                                    const std::string& actor) {
  static const statement lock{
      "mg_callback_lock", std::string("SELECT o.status, ") + row_json +
                              " FROM movement_callback_outbox o WHERE o.id = $1::uuid FOR UPDATE"};
  // Same event id, timestamp, nonce and body: receivers dedupe on event_id.
  static const statement reset{
      "mg_callback_redeliver",
      std::string("UPDATE movement_callback_outbox o SET status = 'pending', attempts = 0,"
                  " next_attempt_at = NULL, last_error = NULL, sent_at = NULL"
                  " WHERE o.id = $1::uuid RETURNING ") +
          row_json};
  pqxx::work tx(conn);
  auto current = exec(tx, lock, id);
  redeliver_result out;
  if (current.empty())
    return out;
  if (std::string(current[0][0].c_str()) == "pending") {
    out.status = redeliver_status::already_pending;
    out.row = current[0][1].c_str();
    return out;
  }
  auto r = exec(tx, reset, id);
  write_audit(tx, actor, "callback.redeliver", id,
              json::writer()
                  .begin_object()
                  .member("previous_status", current[0][0].c_str())
                  .end_object()
                  .str());
  tx.exec(std::string("SELECT pg_notify('") + callback_channel + "', '')");
  tx.commit();
  out.status = redeliver_status::done;
  out.row = r[0][0].c_str();
  return out;
}

} // namespace mg::db
