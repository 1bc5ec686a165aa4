#include "persistence/events.hpp"

#include <stdexcept>

#include "domain/json.hpp"
#include "persistence/db.hpp"

namespace mg::db {

void event_batch::node_changed(domain::request_state request_state, const std::string& node_key,
                               domain::node_state node_state, std::string data) {
  add({"node_state_changed", request_state, node_key, node_state, std::move(data)});
}

void event_batch::add_generated_artifacts(const std::string& node_id, int attempt_no,
                                          const std::string& artifacts_json) {
  if (artifacts_json.empty() || artifacts_json == "[]")
    return;
  auto items = json::parse(artifacts_json);
  if (!items || !items->IsArray())
    throw std::invalid_argument("generated_artifacts is not a JSON array");
  for (auto& item : items->GetArray())
    add_artifact({node_id, attempt_no, "generated", json::dump(item), ""});
}

namespace {

const statement& write_events_statement(bool attention, bool artifacts, bool outbox);

/// The artifacts' rows, from the five text arrays at parameters `first`
/// onwards; created_at is clock_timestamp(), so rows keep the order they
/// were added in.
std::string artifact_rows(int first) {
  std::string params;
  for (int i = first; i < first + 5; ++i)
    params += (i > first ? ", $" : "$") + std::to_string(i) + "::text[]";
  return " SELECT a.node_id::uuid, a.attempt_no::int, a.kind, a.payload::jsonb,"
         " NULLIF(a.hash, '') FROM unnest(" +
         params +
         ") WITH ORDINALITY AS a(node_id, attempt_no, kind, payload, hash, ord)"
         " ORDER BY a.ord";
}

/// The artifact arrays of the statements.
struct artifact_columns {
  std::vector<std::string> nodes, attempts, kinds, payloads, hashes;

  explicit artifact_columns(const std::vector<pending_artifact>& artifacts) {
    for (auto& a : artifacts) {
      nodes.push_back(a.node_id);
      attempts.push_back(std::to_string(a.attempt_no));
      kinds.push_back(a.kind);
      payloads.push_back(a.payload_json);
      hashes.push_back(a.payload_hash);
    }
  }
};

} // namespace

void event_batch::move_into(event_batch& into) {
  // The gathered write keeps the outbox part when any request may need it;
  // its join on callback_url keeps only the rows of requests that have one.
  if (!events_.empty()) {
    const bool into_needs = !into.events_.empty() && into.has_callback_.value_or(true);
    into.has_callback_ = into_needs || has_callback_.value_or(true);
  }
  for (auto& row : events_)
    into.events_.push_back(std::move(row));
  for (auto& a : artifacts_)
    into.artifacts_.push_back(std::move(a));
  events_.clear();
  artifacts_.clear();
}

template <class Run> void event_batch::write(Run&& run) {
  if (events_.empty() && artifacts_.empty())
    return;
  std::vector<std::string> requests, types, states, keys, node_states, data;
  bool attention = false;
  for (auto& [request_id, e] : events_) {
    attention |= e.event_type == "request_attention";
    requests.push_back(request_id);
    types.push_back(e.event_type);
    states.emplace_back(domain::to_string(e.request_state));
    keys.push_back(e.node_key);
    node_states.emplace_back(e.node_state ? domain::to_string(*e.node_state) : "");
    data.push_back(e.data);
  }
  bool outbox = has_callback_.value_or(true);
  if (artifacts_.empty())
    run(write_events_statement(attention, false, outbox), text_array(requests), text_array(types),
        text_array(states), text_array(keys), text_array(node_states), text_array(data),
        max_attempts_);
  else {
    artifact_columns a(artifacts_);
    run(write_events_statement(attention, true, outbox), text_array(requests), text_array(types),
        text_array(states), text_array(keys), text_array(node_states), text_array(data),
        max_attempts_, text_array(a.nodes), text_array(a.attempts), text_array(a.kinds),
        text_array(a.payloads), text_array(a.hashes));
  }
  events_.clear();
  artifacts_.clear();
}

void event_batch::flush_artifacts_into(pqxx::transaction_base& tx, write_batch& batch) {
  static const statement q{
      "mg_write_artifacts",
      std::string("INSERT INTO node_artifacts (node_id, attempt_no, kind, payload, payload_hash)") +
          artifact_rows(1)};
  if (artifacts_.empty())
    return;
  artifact_columns a(artifacts_);
  batch.add(tx, q, text_array(a.nodes), text_array(a.attempts), text_array(a.kinds),
            text_array(a.payloads), text_array(a.hashes));
  artifacts_.clear();
}

void event_batch::flush(pqxx::transaction_base& tx) {
  write([&](const statement& q, auto&&... args) { exec(tx, q, args...); });
}

void event_batch::flush_into(pqxx::transaction_base& tx, write_batch& batch) {
  write([&](const statement& q, auto&&... args) { batch.add(tx, q, args...); });
}

namespace {

/// The events statement, with only the CTEs this batch needs: every
/// ModifyTable in a plan is set up at each execution even when it inserts
/// nothing (and an AFTER ... FOR EACH STATEMENT trigger fires even then),
/// and most batches have no request_attention, some no artifacts and many
/// a request without a callback_url.
const statement& write_events_statement(bool attention, bool artifacts, bool outbox) {
  auto build = [](bool attention, bool artifacts, bool outbox) {
    // ord keeps the events in the order they happened (seq is a bigserial).
    std::string sql =
        "WITH input AS ("
        "  SELECT mg_uuid_v7() AS id, clock_timestamp() AS at, t.*"
        "  FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])"
        "       WITH ORDINALITY"
        "       AS t(request_id, event_type, request_state, node_key, node_state, data, ord)),"
        " ev AS ("
        "  INSERT INTO movement_events (id, request_id, event_type, node_key, payload, occurred_at)"
        "  SELECT id, request_id, event_type, NULLIF(node_key, ''),"
        "    jsonb_strip_nulls(jsonb_build_object('event_id', id, 'event_type', event_type,"
        "      'request_id', request_id, 'request_state', request_state,"
        "      'node_key', NULLIF(node_key, ''), 'node_state', NULLIF(node_state, ''),"
        "      'occurred_at', at)) || jsonb_build_object('data', data::jsonb),"
        "    at"
        "  FROM input ORDER BY ord"
        "  RETURNING id, request_id, event_type, payload)";
    if (attention)
      // Operator notification of each request_attention, in this transaction.
      sql += ", attention AS ("
             "  INSERT INTO notification_outbox (kind, subject, dedupe_key, payload)"
             "  SELECT 'request_attention', r.id::text, 'request_attention:' || ev.id,"
             "    ev.payload || jsonb_build_object('network_class', r.network_class,"
             "      'template_key', r.template_key)"
             "  FROM ev JOIN movement_requests r ON r.id = ev.request_id"
             "  WHERE ev.event_type = 'request_attention' ON CONFLICT (dedupe_key) DO NOTHING)";
    if (artifacts)
      sql += std::string(", art AS ("
                         "  INSERT INTO node_artifacts (node_id, attempt_no, kind, payload,"
                         "   payload_hash)") +
             artifact_rows(8) + ")";
    if (outbox)
      sql += " INSERT INTO movement_callback_outbox (event_id, request_id, event_type, payload,"
             "   callback_url, max_attempts, callback_timestamp, callback_nonce)"
             " SELECT ev.id, r.id, ev.event_type, ev.payload, r.callback_url, $7,"
             "   extract(epoch FROM now())::bigint, replace(gen_random_uuid()::text, '-', '')"
             " FROM ev JOIN movement_requests r ON r.id = ev.request_id"
             " WHERE r.callback_url IS NOT NULL";
    else
      // $7 (the outbox's max_attempts) is still sent: the same arguments
      // for every variant. The CTEs run to completion whatever this reads.
      sql += " SELECT $7::int WHERE false";
    return statement{std::string("mg_write_events") + (attention ? "_attention" : "") +
                         (artifacts ? "_artifacts" : "") + (outbox ? "" : "_no_outbox"),
                     sql};
  };
  static const statement variants[2][2][2] = {
      {{build(false, false, false), build(false, false, true)},
       {build(false, true, false), build(false, true, true)}},
      {{build(true, false, false), build(true, false, true)},
       {build(true, true, false), build(true, true, true)}}};
  return variants[attention][artifacts][outbox];
}

} // namespace

} // namespace mg::db
