#include "persistence/ccip_store.hpp"

#include "domain/json_writer.hpp"
#include "domain/states.hpp"
#include "persistence/db.hpp"
#include "persistence/events.hpp"
#include "persistence/node_store.hpp"
#include "persistence/notification_store.hpp"

namespace mg::db {

namespace {

struct locked_intent {
  std::string node_id;
  int attempt_no = 0;
};

/// The request row first (project lock order), never waiting: a reaper
/// that finds it busy leaves the intent to the next pass.
bool lock_request(pqxx::transaction_base& tx, const std::string& request_id) {
  static const statement q{"mg_ccip_lock_request",
                           "SELECT 1 FROM movement_requests WHERE id = $1 FOR UPDATE SKIP LOCKED"};
  return !exec(tx, q, request_id).empty();
}

/// The intent, only while it is still pending and aged (re-checked under
/// the lock, so a second reaper that got here late finds nothing).
std::optional<locked_intent> lock_pending_intent(pqxx::transaction_base& tx,
                                                 const std::string& intent_id, double age_seconds) {
  static const statement q{
      "mg_ccip_lock_intent",
      "SELECT node_id::text, attempt_no FROM ccip_send_intent WHERE id = $1"
      " AND status = 'pending' AND created_at < clock_timestamp() - make_interval(secs => $2)"
      " FOR UPDATE SKIP LOCKED"};
  auto r = exec(tx, q, intent_id, age_seconds);
  if (r.empty())
    return std::nullopt;
  return locked_intent{str(r[0][0]), r[0][1].as<int>()};
}

void lock_node(pqxx::transaction_base& tx, const std::string& node_id) {
  static const statement q{"mg_ccip_lock_node",
                           "SELECT 1 FROM movement_request_nodes WHERE id = $1 FOR UPDATE"};
  exec(tx, q, node_id);
}

void mark_stranded(pqxx::transaction_base& tx, const std::string& intent_id,
                   domain::node_state node_state, bool sent_to_recovery) {
  static const statement q{
      "mg_ccip_mark_stranded",
      "UPDATE ccip_send_intent SET status = 'stranded', stranded_at = clock_timestamp(),"
      " reaped_node_state = $2, node_sent_to_recovery = $3 WHERE id = $1"};
  exec(tx, q, intent_id, std::string(domain::to_string(node_state)), sent_to_recovery);
}

/// In flight on the intent's own attempt: the send may have left, and only
/// the provider can tell, so recovery must ask it.
bool hand_to_recovery(const claimed_node& n, const locked_intent& intent) {
  if (n.attempt_no != intent.attempt_no)
    return false;
  return domain::is_submitted_in_flight(n.node_state);
}

void notify_operator(pqxx::transaction_base& tx, const std::string& intent_id,
                     const claimed_node& n, const locked_intent& intent, bool sent) {
  notification note;
  note.kind = "ccip_send_stranded";
  note.subject = intent_id;
  note.dedupe_key = "ccip_send_stranded:" + intent_id;
  note.payload_json = json::writer()
                          .begin_object()
                          .member("intent_id", intent_id)
                          .member("request_id", n.request_id)
                          .member("node_id", n.id)
                          .member("node_key", n.node_key)
                          .member("attempt_no", intent.attempt_no)
                          .member("node_state", domain::to_string(n.node_state))
                          .member("sent_to_recovery", sent)
                          .end_object()
                          .str();
  enqueue_notification(tx, note);
}

} // namespace

std::string record_ccip_send_intent(pqxx::transaction_base& tx, const ccip_intent_input& in) {
  static const statement insert{
      "mg_ccip_record_intent",
      "INSERT INTO ccip_send_intent (request_id, node_id, attempt_no, source_chain_selector,"
      " dest_chain_selector, payload) VALUES ($1, $2, $3, $4::numeric, $5::numeric, $6::jsonb)"
      " ON CONFLICT (node_id, attempt_no) DO NOTHING RETURNING id::text"};
  static const statement existing{
      "mg_ccip_existing_intent",
      "SELECT id::text FROM ccip_send_intent WHERE node_id = $1 AND attempt_no = $2"};
  auto r = exec(tx, insert, in.request_id, in.node_id, in.attempt_no, in.source_chain_selector,
                in.dest_chain_selector, in.payload_json);
  if (r.empty())
    r = exec(tx, existing, in.node_id, in.attempt_no);
  return str(r[0][0]);
}

bool resolve_ccip_send_intent(pqxx::transaction_base& tx, const std::string& intent_id,
                              const std::string& message_id, const std::string& tx_hash) {
  static const statement q{"mg_ccip_resolve_intent",
                           "UPDATE ccip_send_intent SET status = 'resolved', message_id = $2,"
                           " tx_hash = COALESCE($3, tx_hash), resolved_at = clock_timestamp()"
                           " WHERE id = $1 AND status IN ('pending', 'stranded') RETURNING 1"};
  return !exec(tx, q, intent_id, message_id, null_if_empty(tx_hash)).empty();
}

std::vector<stranded_candidate> stranded_ccip_candidates(pqxx::transaction_base& tx,
                                                         const std::string& network_class,
                                                         double age_seconds, int limit) {
  static const statement q{"mg_ccip_stranded_candidates",
                           "SELECT i.id::text, i.request_id::text FROM ccip_send_intent i"
                           " JOIN movement_requests r ON r.id = i.request_id"
                           " WHERE i.status = 'pending' AND r.network_class = $1"
                           "   AND i.created_at < clock_timestamp() - make_interval(secs => $2)"
                           " ORDER BY i.created_at LIMIT $3"};
  std::vector<stranded_candidate> out;
  for (auto row : exec(tx, q, network_class, age_seconds, limit))
    out.push_back({str(row[0]), str(row[1])});
  return out;
}

reap_result reap_stranded_ccip_intent(pqxx::transaction_base& tx, const stranded_candidate& c,
                                      double age_seconds, int callback_max_attempts) {
  reap_result out;
  if (!lock_request(tx, c.request_id)) {
    out.outcome = reap_outcome::busy;
    return out;
  }
  auto intent = lock_pending_intent(tx, c.intent_id, age_seconds);
  if (!intent)
    return out; // gone: resolved, or reaped by a reaper that committed first
  lock_node(tx, intent->node_id);
  auto node = load_node(tx, intent->node_id);
  if (!node)
    return out; // the node row cascade-deletes its intents: not reachable
  bool send = hand_to_recovery(*node, *intent);
  if (send) {
    node_update u;
    u.next_state = domain::node_state::unknown;
    u.error_code = ccip_stranded_error_code;
    u.error_detail = "CCIP send intent " + c.intent_id + " unresolved after " +
                     std::to_string(static_cast<long>(age_seconds)) + " s";
    // A late submit or observe result of this attempt must change nothing:
    // recovery asks the provider with the new token.
    u.token = claim_token_change::rotate;
    event_batch events(node->request_id, callback_max_attempts);
    auto fx = apply_node_update(tx, *node, u, events);
    events.flush(tx);
    out.needs_reconcile = fx.needs_reconcile;
  }
  mark_stranded(tx, c.intent_id, node->node_state, send);
  notify_operator(tx, c.intent_id, *node, *intent, send);
  out.outcome = send ? reap_outcome::sent_to_unknown : reap_outcome::stranded_only;
  return out;
}

} // namespace mg::db
