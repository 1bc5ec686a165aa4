#pragma once
// ccip_send_intent: the write-ahead record of a CCIP send (one per node
// attempt), its resolution, and the stranded reaper's claim and write
// (reference §11).
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

namespace mg::db {

struct ccip_intent_input {
  std::string request_id;
  std::string node_id;
  int attempt_no = 0;
  std::string source_chain_selector; // decimal uint64
  std::string dest_chain_selector;   // decimal uint64
  std::string payload_json = "{}";
};

/// Records the intent before the send; the same (node, attempt) again
/// returns the existing row's id (the send is being retried, not repeated).
std::string record_ccip_send_intent(pqxx::transaction_base& tx, const ccip_intent_input& in);

/// The message is known: pending (or already stranded) → resolved. False
/// when the intent is unknown or already resolved.
bool resolve_ccip_send_intent(pqxx::transaction_base& tx, const std::string& intent_id,
                              const std::string& message_id, const std::string& tx_hash = {});

struct stranded_candidate {
  std::string intent_id;
  std::string request_id;
};

/// Unlocked snapshot, oldest first: pending intents older than
/// `age_seconds` of this network class's requests.
std::vector<stranded_candidate> stranded_ccip_candidates(pqxx::transaction_base& tx,
                                                         const std::string& network_class,
                                                         double age_seconds, int limit);

enum class reap_outcome {
  busy,            // the request or the intent is locked by another transaction
  gone,            // resolved or reaped meanwhile
  sent_to_unknown, // stranded; its node (same attempt, in flight) is now UNKNOWN
  stranded_only,   // stranded; the node had moved on, so only the operator hears of it
};

/// The error code an UNKNOWN node gets from the reaper.
inline constexpr const char* ccip_stranded_error_code = "CCIP_SEND_STRANDED";

struct reap_result {
  reap_outcome outcome = reap_outcome::gone;
  bool needs_reconcile = false;
};

/// Reaps one intent in `tx`: locks its request (SKIP LOCKED, lock order
/// request → node), re-checks it is still pending and aged (SKIP LOCKED),
/// marks it stranded, moves its node to UNKNOWN through apply_node_update
/// (event row, new claim token) when the node is SUBMITTING, SUBMITTED or
/// OBSERVING on the intent's attempt, and enqueues an operator notification.
reap_result reap_stranded_ccip_intent(pqxx::transaction_base& tx, const stranded_candidate& c,
                                      double age_seconds, int callback_max_attempts);

} // namespace mg::db
