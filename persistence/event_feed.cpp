#include "persistence/event_feed.hpp"

#include "persistence/db.hpp"

namespace mg::db {

std::vector<fed_event> events_after(pqxx::transaction_base& tx, uint64_t after_seq,
                                    const std::string& request_id, int limit) {
  // The item is built exactly as list_events (persistence/request_view.cpp)
  // builds an event, so a subscriber and GET …/events see the same bytes.
  static const statement q{
      "mg_events_after",
      "SELECT e.seq, e.request_id::text, e.id::text,"
      "  json_build_object('kind', 'event', 'id', e.id, 'event_type', e.event_type,"
      "    'node_key', e.node_key, 'occurred_at', e.occurred_at, 'payload', e.payload)::text"
      " FROM movement_events e"
      " WHERE e.seq > $1 AND ($2::uuid IS NULL OR e.request_id = $2::uuid)"
      " ORDER BY e.seq LIMIT $3"};
  std::vector<fed_event> out;
  for (const auto& row :
       exec(tx, q, static_cast<long long>(after_seq), null_if_empty(request_id), limit))
    out.push_back({row[0].as<uint64_t>(), str(row[1]), str(row[2]), str(row[3])});
  return out;
}

uint64_t last_event_seq(pqxx::transaction_base& tx) {
  static const statement q{"mg_last_event_seq",
                           "SELECT coalesce(max(seq), 0) FROM movement_events"};
  return exec(tx, q)[0][0].as<uint64_t>();
}

std::optional<uint64_t> event_seq(pqxx::transaction_base& tx, const std::string& event_id,
                                  const std::string& request_id) {
  static const statement q{"mg_event_seq", "SELECT seq FROM movement_events WHERE id = $1::uuid"
                                           " AND ($2::uuid IS NULL OR request_id = $2::uuid)"};
  auto r = exec(tx, q, event_id, null_if_empty(request_id));
  if (r.empty())
    return std::nullopt;
  return r[0][0].as<uint64_t>();
}

} // namespace mg::db
