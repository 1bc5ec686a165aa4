#include "persistence/capital_transfer_store.hpp"

#include "domain/json_writer.hpp"
#include "persistence/db.hpp"
#include "persistence/notification_store.hpp"

namespace mg::db {

std::string create_capital_transfer(pqxx::transaction_base& tx, const capital_transfer_input& in) {
  static const statement insert{
      "mg_capital_create",
      "INSERT INTO capital_transfer_requests (network_class, movement_request_id, from_venue,"
      " to_venue, asset, amount, requested_by, idempotency_key)"
      " VALUES ($1, $2::uuid, $3, $4, $5, $6::numeric, $7, $8)"
      " ON CONFLICT (idempotency_key) DO NOTHING RETURNING id::text"};
  static const statement existing{
      "mg_capital_existing",
      "SELECT id::text FROM capital_transfer_requests WHERE idempotency_key = $1"};
  auto r =
      exec(tx, insert, in.network_class, null_if_empty(in.movement_request_id), in.from_venue,
           in.to_venue, in.asset, in.amount, in.requested_by, null_if_empty(in.idempotency_key));
  if (r.empty())
    r = exec(tx, existing, in.idempotency_key);
  return str(r[0][0]);
}

bool link_capital_transfer(pqxx::transaction_base& tx, const std::string& id,
                           const std::string& movement_request_id) {
  static const statement q{"mg_capital_link",
                           "UPDATE capital_transfer_requests SET movement_request_id = $2,"
                           " updated_at = clock_timestamp()"
                           " WHERE id = $1 AND status = 'pending' RETURNING 1"};
  return !exec(tx, q, id, movement_request_id).empty();
}

namespace {

/// The linked movement's state; none when the row links no movement.
std::optional<domain::request_state> movement_state_of(const pqxx::field& f) {
  if (f.is_null())
    return std::nullopt;
  return request_state_of(f.c_str(), "movement_requests.request_state");
}

} // namespace

std::vector<stale_capital_transfer> claim_stale_capital_transfers(pqxx::transaction_base& tx,
                                                                  const std::string& network_class,
                                                                  double stale_seconds, int limit) {
  // A row already surfaced whose movement is still open needs nothing, so
  // it is left out: a drain pass must not spin on it.
  static const statement q{"mg_capital_claim_stale",
                           "SELECT c.id::text, COALESCE(c.movement_request_id::text, ''),"
                           " r.request_state, c.attention_raised_at IS NOT NULL,"
                           " extract(epoch FROM clock_timestamp() - c.created_at)::bigint"
                           " FROM capital_transfer_requests c"
                           " LEFT JOIN movement_requests r ON r.id = c.movement_request_id"
                           " WHERE c.status = 'pending' AND c.network_class = $1"
                           "   AND c.created_at < clock_timestamp() - make_interval(secs => $2)"
                           "   AND (c.attention_raised_at IS NULL OR r.request_state IN"
                           "        ('COMPLETED', 'FAILED', 'CANCELLED', 'EXPIRED', 'REJECTED'))"
                           " ORDER BY c.created_at, c.id LIMIT $3"
                           " FOR UPDATE OF c SKIP LOCKED"};
  std::vector<stale_capital_transfer> out;
  for (auto row : exec(tx, q, network_class, stale_seconds, limit))
    out.push_back({str(row[0]), str(row[1]), movement_state_of(row[2]), row[3].as<bool>(),
                   row[4].as<long>()});
  return out;
}

void settle_capital_transfer(pqxx::transaction_base& tx, const std::string& id,
                             const std::string& status, domain::request_state resolution) {
  static const statement q{"mg_capital_settle",
                           "UPDATE capital_transfer_requests SET status = $2, resolution = $3,"
                           " attention_required = false, resolved_at = clock_timestamp(),"
                           " updated_at = clock_timestamp() WHERE id = $1 AND status = 'pending'"};
  exec(tx, q, id, status, std::string(domain::to_string(resolution)));
}

void raise_capital_transfer_attention(pqxx::transaction_base& tx,
                                      const stale_capital_transfer& row) {
  static const statement q{
      "mg_capital_attention",
      "UPDATE capital_transfer_requests SET attention_required = true,"
      " attention_raised_at = clock_timestamp(), updated_at = clock_timestamp()"
      " WHERE id = $1 AND status = 'pending'"
      " RETURNING from_venue, to_venue, asset, amount::text"};
  auto r = exec(tx, q, row.id);
  if (r.empty())
    return;
  notification note;
  note.kind = "capital_transfer_stale";
  note.subject = row.id;
  note.dedupe_key = "capital_transfer_stale:" + row.id;
  note.payload_json =
      json::writer()
          .begin_object()
          .member("capital_transfer_id", row.id)
          .member_or_null("movement_request_id", row.movement_request_id)
          .member_or_null("movement_state", row.movement_state
                                                ? domain::to_string(*row.movement_state)
                                                : std::string_view())
          .member("age_seconds", row.age_seconds)
          .member("from_venue", str(r[0][0]))
          .member("to_venue", str(r[0][1]))
          .member("asset", str(r[0][2]))
          .member("amount", str(r[0][3]))
          .end_object()
          .str();
  enqueue_notification(tx, note);
}

} // namespace mg::db
