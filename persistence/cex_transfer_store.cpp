#include "persistence/cex_transfer_store.hpp"

#include "domain/hash.hpp"
#include "domain/json_writer.hpp"
#include "persistence/db.hpp"
#include "persistence/notification_store.hpp"

namespace mg::db {

namespace {

enum class upsert_effect { inserted, updated, untouched };

upsert_effect upsert_one(pqxx::transaction_base& tx, const std::string& venue,
                         const cex_transfer& t) {
  // The update arm runs only when the facts agree and something the venue
  // may legitimately change did change (so a re-pull writes nothing).
  static const statement q{
      "mg_cex_upsert",
      "INSERT INTO cex_transfers AS c (venue, venue_transfer_id, direction, asset, amount, status,"
      " tx_hash, network, address, occurred_at, raw)"
      " VALUES ($1, $2, $3, $4, $5::numeric, $6, $7, $8, $9, $10::timestamptz, $11::jsonb)"
      " ON CONFLICT (venue, venue_transfer_id) DO UPDATE SET status = EXCLUDED.status,"
      "   tx_hash = COALESCE(EXCLUDED.tx_hash, c.tx_hash),"
      "   network = COALESCE(EXCLUDED.network, c.network),"
      "   address = COALESCE(EXCLUDED.address, c.address),"
      "   raw = EXCLUDED.raw, updated_at = clock_timestamp()"
      " WHERE c.direction = EXCLUDED.direction AND c.asset = EXCLUDED.asset"
      "   AND c.amount = EXCLUDED.amount"
      "   AND (c.status IS DISTINCT FROM EXCLUDED.status"
      "     OR (EXCLUDED.tx_hash IS NOT NULL AND c.tx_hash IS DISTINCT FROM EXCLUDED.tx_hash)"
      "     OR (EXCLUDED.network IS NOT NULL AND c.network IS DISTINCT FROM EXCLUDED.network)"
      "     OR (EXCLUDED.address IS NOT NULL AND c.address IS DISTINCT FROM EXCLUDED.address))"
      " RETURNING xmax = 0"};
  auto r = exec(tx, q, venue, t.venue_transfer_id, t.direction, t.asset, t.amount, t.status,
                null_if_empty(t.tx_hash), null_if_empty(t.network), null_if_empty(t.address),
                t.occurred_at, t.raw_json);
  if (r.empty())
    return upsert_effect::untouched;
  return r[0][0].as<bool>() ? upsert_effect::inserted : upsert_effect::updated;
}

/// The stored facts of a known transfer differ from what the venue says now.
bool facts_differ(pqxx::transaction_base& tx, const std::string& venue, const cex_transfer& t) {
  static const statement q{"mg_cex_facts_differ",
                           "SELECT NOT (direction = $3 AND asset = $4 AND amount = $5::numeric)"
                           " FROM cex_transfers WHERE venue = $1 AND venue_transfer_id = $2"};
  auto r = exec(tx, q, venue, t.venue_transfer_id, t.direction, t.asset, t.amount);
  return !r.empty() && r[0][0].as<bool>();
}

void notify_mismatch(pqxx::transaction_base& tx, const std::string& venue, const cex_transfer& t) {
  auto claim = t.direction + "|" + t.asset + "|" + t.amount;
  notification note;
  note.kind = "cex_transfer_mismatch";
  note.subject = venue + ":" + t.venue_transfer_id;
  // One notification per distinct (wrong) claim, not per pull.
  note.dedupe_key = "cex_transfer_mismatch:" + venue + ":" + t.venue_transfer_id + ":" +
                    domain::sha256_hex(claim).substr(0, 16);
  note.payload_json = json::writer()
                          .begin_object()
                          .member("venue", venue)
                          .member("venue_transfer_id", t.venue_transfer_id)
                          .key("reported")
                          .begin_object()
                          .member("direction", t.direction)
                          .member("asset", t.asset)
                          .member("amount", t.amount)
                          .end_object()
                          .end_object()
                          .str();
  enqueue_notification(tx, note);
}

/// At most `max` bytes, never cutting a UTF-8 sequence in half.
std::string clip_utf8(const std::string& s, size_t max) {
  if (s.size() <= max)
    return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80)
    --n;
  return s.substr(0, n);
}

void ensure_cursor_row(pqxx::transaction_base& tx, const std::string& venue) {
  static const statement q{"mg_cex_cursor_row",
                           "INSERT INTO cex_transfer_cursors (venue) VALUES ($1)"
                           " ON CONFLICT (venue) DO NOTHING"};
  exec(tx, q, venue);
}

} // namespace

upsert_counts upsert_cex_transfers(pqxx::transaction_base& tx, const std::string& venue,
                                   const std::vector<cex_transfer>& transfers) {
  upsert_counts out;
  for (auto& t : transfers) {
    switch (upsert_one(tx, venue, t)) {
    case upsert_effect::inserted:
      ++out.inserted;
      break;
    case upsert_effect::updated:
      ++out.updated;
      break;
    case upsert_effect::untouched:
      if (facts_differ(tx, venue, t)) {
        ++out.mismatched;
        notify_mismatch(tx, venue, t);
      } else {
        ++out.unchanged;
      }
      break;
    }
  }
  return out;
}

std::optional<std::string> cex_cursor(pqxx::transaction_base& tx, const std::string& venue) {
  static const statement q{"mg_cex_cursor",
                           "SELECT cursor FROM cex_transfer_cursors WHERE venue = $1"};
  ensure_cursor_row(tx, venue);
  auto r = exec(tx, q, venue);
  if (r.empty() || r[0][0].is_null())
    return std::nullopt;
  return std::string(r[0][0].c_str());
}

bool advance_cex_cursor(pqxx::transaction_base& tx, const std::string& venue,
                        const std::optional<std::string>& expected,
                        const std::optional<std::string>& next) {
  static const statement lock{"mg_cex_cursor_lock",
                              "SELECT cursor FROM cex_transfer_cursors WHERE venue = $1"
                              " FOR UPDATE"};
  static const statement update{
      "mg_cex_cursor_advance",
      "UPDATE cex_transfer_cursors SET cursor = CASE WHEN $2 THEN COALESCE($3, cursor)"
      "   ELSE cursor END,"
      " pulls_total = pulls_total + 1, consecutive_failures = 0,"
      " last_success_at = clock_timestamp(), updated_at = clock_timestamp() WHERE venue = $1"};
  ensure_cursor_row(tx, venue);
  auto r = exec(tx, lock, venue);
  std::optional<std::string> current;
  if (!r.empty() && !r[0][0].is_null())
    current = std::string(r[0][0].c_str());
  bool ours = current == expected;
  exec(tx, update, venue, ours, next ? next->c_str() : nullptr);
  return ours;
}

void record_cex_pull_failure(pqxx::transaction_base& tx, const std::string& venue,
                             const std::string& error) {
  static const statement q{
      "mg_cex_pull_failure",
      "INSERT INTO cex_transfer_cursors AS k (venue, pulls_total, failures_total,"
      " consecutive_failures, last_error, last_failure_at)"
      " VALUES ($1, 1, 1, 1, $2, clock_timestamp())"
      " ON CONFLICT (venue) DO UPDATE SET pulls_total = k.pulls_total + 1,"
      " failures_total = k.failures_total + 1, consecutive_failures = k.consecutive_failures + 1,"
      " last_error = $2, last_failure_at = clock_timestamp(), updated_at = clock_timestamp()"};
  exec(tx, q, venue, clip_utf8(error, 500));
}

} // namespace mg::db
