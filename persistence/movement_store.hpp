#pragma once
// Movement requests: create, approve, reconcile, expire, read, and every
// other write of a request's own row but the operator transitions
// (operator_store).
#include <map>
#include <optional>
#include <pqxx/pqxx>
#include <set>
#include <string>
#include <vector>

#include "domain/reconcile.hpp"
#include "persistence/db.hpp"
#include "persistence/node_store.hpp"
#include "persistence/template_store.hpp"

namespace mg::db {

class event_batch;

struct create_params {
  std::string template_key;
  int template_version = 0; // 0: latest
  std::string intent = "{}";
  std::string input_params = "{}";
  std::string callback_url;
  std::string idempotency_key;
  std::string created_by;
  std::string network_class = "devnet";
  int approval_ttl_seconds = 300;
  std::string body_hash; // create_body_hash ("" → null)
};

struct create_result {
  std::string id;
  bool deduplicated = false;
};

/// Inserts the request (PENDING_APPROVAL) and its nodes (all BLOCKED) with
/// the request_created event. An existing idempotency key returns that
/// request with deduplicated = true. Throws std::invalid_argument for an
/// unknown template. The request_created callback row takes
/// `callback_max_attempts` (MG_CALLBACK_MAX_ATTEMPTS): no default, so no
/// caller can forget it.
create_result create_request(pqxx::transaction_base& tx, plan_cache& plans, const create_params& p,
                             int callback_max_attempts);

struct existing_request {
  std::string id;
  std::string body_hash;
};

/// The request holding `idempotency_key`, if any.
std::optional<existing_request> find_by_idempotency_key(pqxx::transaction_base& tx,
                                                        const std::string& idempotency_key);

struct reconcile_settings {
  double unknown_escalate_seconds;
  int callback_max_attempts;
};

struct reconcile_outcome {
  bool found = false;
  domain::request_state request_state = domain::request_state::pending_approval; // after reconcile
  int activated = 0;
  std::vector<std::string> activated_keys; // the nodes it made READY
  bool changed = false;
  bool terminal = false; // nothing more for the workers to do
  // Whether it wrote anything. When it did not, the transaction only holds
  // row locks: the caller rolls it back (a COMMIT would flush WAL for
  // nothing).
  bool wrote = false;
  // Not reconciled because another transaction holds the request row
  // (lock_wait::skip_locked only); not found is false here.
  bool held_elsewhere = false;
};

/// Whether locking a request row another transaction holds waits for it or
/// passes over it.
enum class lock_wait { wait, skip_locked };

/// A node locked with its request: how reconcile sees it, and the claim a
/// worker's result is re-checked against.
struct locked_node {
  std::string id;
  int attempt_no = 0;
  std::string claim_token; // "" when none
  int observe_count = 0;
  domain::node_view view;
};

/// A request row locked with all its nodes.
struct locked_request {
  domain::request_state state = domain::request_state::pending_approval;
  bool dispatch_paused = false;
  bool attention_raised = false;
  bool needs_reconcile = false;
  std::vector<std::string> frontier;
  std::string template_key;
  int template_version = 0;
  bool has_callback = false;
  std::vector<locked_node> nodes; // in position order
};

/// Locked requests by id.
using locked_requests = std::map<std::string, locked_request>;

/// Locks the rows of `request_ids` (any order, duplicates allowed) in id
/// order and then all their nodes, in one round trip; with
/// lock_wait::skip_locked a row another transaction holds is passed over
/// (absent from the answer).
locked_requests lock_requests_with_nodes(pqxx::transaction_base& tx,
                                         std::vector<std::string> request_ids, lock_wait wait);

/// reconcile_requests on rows `locked` already holds (as the caller changed
/// them in memory since): the ids not in `locked` are not reconciled
/// (`held_elsewhere` when they exist). Outcomes in id order. The nodes a
/// request of `caller_activates` activates are left BLOCKED in their rows
/// (their events and activated_keys stay): the caller writes them (SPEC §1
/// chain claim, see db::claim_activated and db::queue_activation).
std::vector<reconcile_outcome>
reconcile_locked_requests(pqxx::transaction_base& tx, plan_cache& plans,
                          const locked_requests& locked, std::vector<std::string> request_ids,
                          const reconcile_settings& settings, event_batch* gather_events,
                          write_batch* pending, const std::set<std::string>& caller_activates = {});

/// Queues on `batch` the READY rows of `nodes` that are still BLOCKED: the
/// activated nodes a chain claim did not take.
void queue_activation(pqxx::transaction_base& tx, write_batch& batch,
                      const std::vector<activated_node>& nodes);

/// Reconciles one request in `tx`: locks the request row, then its nodes,
/// applies domain::reconcile's actions with their events and clears
/// needs_reconcile. The caller commits. With `gather_events`, the events
/// join that batch (written before the caller commits) instead.
reconcile_outcome reconcile_request(pqxx::transaction_base& tx, plan_cache& plans,
                                    const std::string& request_id,
                                    const reconcile_settings& settings,
                                    event_batch* gather_events = nullptr);

/// reconcile_request for several requests at once: their rows locked in id
/// order, then their nodes, and every write in one round trip. Outcomes in
/// id order (duplicates reconciled once). With lock_wait::skip_locked a
/// request row another transaction holds is passed over (`held_elsewhere`)
/// instead of waited for. With `pending`, the writes are queued there for
/// the caller to run with its own next statements (one round trip) instead
/// of run here.
std::vector<reconcile_outcome> reconcile_requests(pqxx::transaction_base& tx, plan_cache& plans,
                                                  std::vector<std::string> request_ids,
                                                  const reconcile_settings& settings,
                                                  event_batch* gather_events = nullptr,
                                                  lock_wait wait = lock_wait::wait,
                                                  write_batch* pending = nullptr);

enum class approve_status { approved, not_found, conflict, expired };

struct approve_result {
  approve_status status = approve_status::not_found;
  reconcile_outcome reconciled;
};

/// The request row locked for an approval, with its nodes (locked too when
/// it is PENDING_APPROVAL and not expired).
struct approval_lock {
  std::string request_id;
  domain::request_state request_state = domain::request_state::pending_approval;
  std::string created_by;
  bool expired = false; // expires_at <= now
  bool dispatch_paused = false;
  bool attention_raised = false;
  std::vector<std::string> frontier;
  std::string template_key;
  int template_version = 0;
  bool has_callback = false;
  std::vector<domain::node_view> nodes;
};
/// Locks the request (and its nodes) for approve_locked; nullopt: no such
/// request.
std::optional<approval_lock> lock_for_approval(pqxx::transaction_base& tx,
                                               const std::string& request_id);
/// PENDING_APPROVAL and not expired → APPROVED, reconciled in the same
/// transaction on the rows `locked` holds (roots become READY), and NOTIFY
/// the dispatchers: one round trip. conflict / expired otherwise.
approve_result approve_locked(pqxx::transaction_base& tx, plan_cache& plans,
                              const approval_lock& locked, const std::string& approver,
                              const reconcile_settings& settings);
/// lock_for_approval, then approve_locked.
approve_result approve_request(pqxx::transaction_base& tx, plan_cache& plans,
                               const std::string& request_id, const std::string& approver,
                               const reconcile_settings& settings);

/// Unlocked snapshot: active requests flagged needs_reconcile for at least
/// `grace_seconds` (a live movement actor reconciles within milliseconds),
/// plus EXECUTING requests holding a settled UNKNOWN node (escalation needs
/// no node change, only time, so nothing else would flag them).
std::vector<std::string> reconcile_sweep_candidates(pqxx::transaction_base& tx,
                                                    const std::string& network_class,
                                                    double unknown_escalate_seconds, int limit,
                                                    double grace_seconds = 1.0);

/// The NOTIFY channel dispatchers LISTEN on (payload: the sender's
/// application_name).
inline constexpr const char* dispatch_channel = "mg_dispatch";
/// The statement that notifies dispatch_channel.
std::string notify_dispatch_sql();

struct node_snapshot {
  std::string node_key;
  std::string action_type;
  domain::node_state node_state = domain::node_state::blocked;
  int attempt_no = 0;
  std::string error_code;
  std::string provider_refs;
};

struct request_snapshot {
  std::string id;
  domain::request_state request_state = domain::request_state::pending_approval;
  std::vector<std::string> frontier;
  bool dispatch_paused = false;
  bool needs_reconcile = false;
  std::vector<node_snapshot> nodes;
};

std::optional<request_snapshot> load_request(pqxx::transaction_base& tx,
                                             const std::string& request_id);

// --- the request row: first dispatch, flags, expiry ------------------------
/// Queues on `batch` APPROVED → EXECUTING for `request_ids`, at the first
/// dispatch of one of each request's nodes (the caller holds the request
/// rows from its claims).
void add_first_dispatch(pqxx::transaction_base& tx, write_batch& batch,
                        const std::vector<std::string>& request_ids);

/// Flags the request row (needs_reconcile when `reconcile`, dispatch
/// paused when `pause`; neither is ever cleared here). Written even with
/// nothing to flag, it takes the request row's lock: callers use it to
/// lock the request before its nodes.
void flag_request(pqxx::transaction_base& tx, const std::string& request_id, bool reconcile,
                  bool pause);
/// flag_request, queued on `batch`.
void add_request_flag(pqxx::transaction_base& tx, write_batch& batch, const std::string& request_id,
                      bool reconcile, bool pause);

/// Reference lookup: at most `limit` PENDING_APPROVAL requests of
/// `network_class` whose expires_at has passed (SKIP LOCKED). Each goes
/// EXPIRED with approval_status 'rejected' and a request_expired event
/// (plus its callback outbox row) in `tx`. Returns the expired ids.
std::vector<std::string> expire_pending_requests(pqxx::transaction_base& tx,
                                                 const std::string& network_class, int limit,
                                                 int callback_max_attempts);

} // namespace mg::db
