#include "persistence/events.hpp"

#include "persistence/db.hpp"

namespace mg::db {

void event_batch::node_changed(const std::string& request_state, const std::string& node_key,
                               const std::string& node_state, std::string data) {
  add({"node_state_changed", request_state, node_key, node_state, std::move(data)});
}

void event_batch::flush(pqxx::transaction_base& tx) {
  if (events_.empty())
    return;
  std::vector<std::string> types, states, keys, node_states, data;
  for (auto& e : events_) {
    types.push_back(e.event_type);
    states.push_back(e.request_state);
    keys.push_back(e.node_key);
    node_states.push_back(e.node_state);
    data.push_back(e.data);
  }
  // ord keeps the events in the order they happened (seq is a bigserial).
  static const statement q{
      "mg_write_events",
      "WITH input AS ("
      "  SELECT gen_random_uuid() AS id, clock_timestamp() AS at, t.*"
      "  FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[])"
      "       WITH ORDINALITY AS t(event_type, request_state, node_key, node_state, data, ord)),"
      " ev AS ("
      "  INSERT INTO movement_events (id, request_id, event_type, node_key, payload, occurred_at)"
      "  SELECT id, $1::uuid, event_type, NULLIF(node_key, ''),"
      "    jsonb_strip_nulls(jsonb_build_object('event_id', id, 'event_type', event_type,"
      "      'request_id', $1::uuid, 'request_state', request_state,"
      "      'node_key', NULLIF(node_key, ''), 'node_state', NULLIF(node_state, ''),"
      "      'occurred_at', at)) || jsonb_build_object('data', data::jsonb),"
      "    at"
      "  FROM input ORDER BY ord"
      "  RETURNING id, event_type, payload),"
      // Operator notification of each request_attention, in this transaction.
      " attention AS ("
      "  INSERT INTO notification_outbox (kind, subject, dedupe_key, payload)"
      "  SELECT 'request_attention', r.id::text, 'request_attention:' || ev.id,"
      "    ev.payload || jsonb_build_object('network_class', r.network_class,"
      "      'template_key', r.template_key)"
      "  FROM ev JOIN movement_requests r ON r.id = $1::uuid"
      "  WHERE ev.event_type = 'request_attention' ON CONFLICT (dedupe_key) DO NOTHING)"
      " INSERT INTO movement_callback_outbox (event_id, request_id, event_type, payload,"
      "   callback_url, max_attempts, callback_timestamp, callback_nonce)"
      " SELECT ev.id, r.id, ev.event_type, ev.payload, r.callback_url, $7,"
      "   extract(epoch FROM now())::bigint, replace(gen_random_uuid()::text, '-', '')"
      " FROM ev JOIN movement_requests r ON r.id = $1::uuid"
      " WHERE r.callback_url IS NOT NULL"};
  exec(tx, q, request_id_, text_array(types), text_array(states), text_array(keys),
       text_array(node_states), text_array(data), max_attempts_);
  events_.clear();
}

} // namespace mg::db
