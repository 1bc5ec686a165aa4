#pragma once
// Node claims (reference lookup queries + SPEC §1 filters) and the
// conditional writes that follow provider I/O.
#include <optional>
#include <pqxx/pqxx>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "domain/executor.hpp"
#include "persistence/events.hpp"

namespace mg::db {

/// A node row with the request fields the workers need, read under lock.
struct claimed_node {
  std::string id;
  std::string request_id;
  int position = 0;
  std::string node_key;
  std::string node_kind;
  std::string action_type;
  std::string executor_key;
  std::string signer_key;
  bool side_effect = false;
  bool signing_required = false;
  domain::node_state node_state = domain::node_state::blocked;
  int attempt_no = 0;
  std::string idempotency_key;
  std::string provider_refs;
  std::string claim_token;
  std::string error_code;
  double seconds_since_started = -1; // -1: never started
  domain::request_state request_state = domain::request_state::approved;
  std::string template_key;
  int template_version = 0;
  std::string compiled_plan_hash;
  std::string intent;
  std::string input_params;
  int prepare_errors = 0; // preflight/prepare exceptions in a row
  int observe_count = 0;  // observations written so far (a result re-checks it)
  // The request has a callback_url (read with the node; it never changes).
  // Unset for a node built by hand: its events then keep the outbox part.
  std::optional<bool> has_callback;
  // Seconds since the latest predecessor last changed (read by the dispatch
  // claim only); -1: no predecessor, or not read.
  double seconds_since_predecessors = -1;
  // What the node's context reads of its request's COMPLETED nodes, read
  // by the dispatch claims (db::completed_nodes_sql) for build_contexts in
  // the same transaction.
  std::optional<std::string> completed_for_context;
  // Read BLOCKED by a chain claim whose transaction activates it: its row
  // becomes SUBMITTING straight away, or READY when the claim leaves it.
  bool activation_pending = false;
};

/// A node with its request fields, read without any lock (tests, inspection).
std::optional<claimed_node> load_node(pqxx::transaction_base& tx, const std::string& id);

// --- dispatcher ----------------------------------------------------------
/// Unlocked FIFO snapshot of READY, non-manual nodes of claimable requests
/// (APPROVED/EXECUTING, this network class, dispatch not paused) that are
/// not waiting out a retry (retry_at), skipping `exclude` (ids already
/// tried in this pass).
std::vector<std::string> dispatch_candidates(pqxx::transaction_base& tx,
                                             const std::string& network_class,
                                             const std::vector<std::string>& exclude, int limit);

/// How a joined node + request claim (SKIP LOCKED) releases what a miss
/// locked: PostgreSQL may lock the node side before it skips a locked
/// request side.
enum class claim_scope {
  /// `tx` may hold other work: the claim runs under a miss-only savepoint
  /// that is rolled back on a miss (reference), so `tx` goes on.
  savepoint,
  /// The claim is the first locking statement of `tx` and the caller ends
  /// `tx` on a miss, which releases the same partial locks: saves the
  /// SAVEPOINT and RELEASE round trips of every hit.
  first_in_transaction,
};

/// Per-candidate joined claim: on a miss nullopt is returned (see
/// claim_scope for the partial locks); on a hit the node and request stay
/// locked by `tx`.
std::optional<claimed_node> claim_for_dispatch(pqxx::transaction_base& tx, const std::string& id,
                                               const std::string& network_class,
                                               claim_scope scope = claim_scope::savepoint);

/// SPEC §1 batched claims: the claimable nodes of `ids` whose node and
/// request rows are free, locked in one statement (SKIP LOCKED), in FIFO
/// order. Never waits; a listed row that is locked but no longer claimable
/// (another claim took it meanwhile) stays locked until `tx` ends — only
/// for the claim transaction's short, wait-free life, instead of a
/// savepoint's three round trips per candidate.
std::vector<claimed_node> claim_for_dispatch_batch(pqxx::transaction_base& tx,
                                                   const std::vector<std::string>& ids,
                                                   const std::string& network_class);

/// A successor a reconcile in `tx` just activated: (request id, node key).
struct activated_node {
  std::string request_id;
  std::string node_key;
};

/// SPEC §1 chain claim: the claimable ones of `nodes` (the dispatch claim's
/// filters), in FIFO order, locked in one statement. `nodes` were activated
/// in `tx` with their READY rows left to the caller
/// (reconcile_locked_requests' `caller_activates`): they are read BLOCKED,
/// marked activation_pending, and each either becomes SUBMITTING from
/// BLOCKED, or settles or is deferred at its claim, or is made READY by
/// queue_activation — one row version fewer for every node taken. `tx`
/// already holds their requests and nodes (the reconcile that activated
/// them locked them), so nothing is waited for and no partial lock is left
/// behind. With `before`, its queued statements run first, in the same
/// round trip.
std::vector<claimed_node> claim_activated(pqxx::transaction_base& tx,
                                          const std::vector<activated_node>& nodes,
                                          const std::string& network_class,
                                          write_batch* before = nullptr);

/// SPEC §1 "preflight/prepare errors": the claimed node stays (or, when
/// activation_pending, becomes) READY, one
/// more error in a row is counted and recorded (error_code, error_detail),
/// and no claim takes it again for `retry_in_seconds`. Writes no event.
void defer_after_prepare_error(pqxx::transaction_base& tx, const claimed_node& n,
                               const std::string& error_code, const std::string& error_detail,
                               double retry_in_seconds);

// --- observer ------------------------------------------------------------
/// Unlocked snapshot of due SUBMITTED/OBSERVING nodes of EXECUTING requests.
std::vector<std::string> observe_candidates(pqxx::transaction_base& tx,
                                            const std::string& network_class, int limit);

/// Seconds until the next SUBMITTED/OBSERVING node of an EXECUTING request
/// becomes due (0 when one is due now), or nullopt when there is none.
std::optional<double> next_observe_due_in(pqxx::transaction_base& tx,
                                          const std::string& network_class);

/// Per-node claim (node + request, SKIP LOCKED, same due predicate); a miss
/// releases its partial locks as `scope` says.
std::optional<claimed_node> claim_for_observe(pqxx::transaction_base& tx, const std::string& id,
                                              const std::string& network_class,
                                              claim_scope scope = claim_scope::savepoint);

// --- recovery ------------------------------------------------------------
struct recovery_limits {
  int batch = 10;
  double submitting_grace_seconds = 120;
  double unknown_escalate_seconds = 900;
};

/// The four arms (CCIP, Stargate, CEX, other), each max(1, batch/4) rows of
/// UNKNOWN (not settled) or SUBMITTING-past-grace nodes of EXECUTING
/// requests, oldest updated_at first, locked with SKIP LOCKED.
std::vector<claimed_node> claim_for_recovery(pqxx::transaction_base& tx,
                                             const std::string& network_class,
                                             const recovery_limits& limits);

/// Whether nodes recovery may act on exist at all, locked or not: after a
/// claim that got none, true means their rows are held by another
/// transaction (a reconcile, say) and the pass should look again soon.
bool recovery_work_waiting(pqxx::transaction_base& tx, const std::string& network_class,
                           const recovery_limits& limits);

/// Which lane a node's action type belongs to (0 CCIP, 1 Stargate, 2 CEX, 3 other).
int recovery_lane(const std::string& action_type);

// --- writes --------------------------------------------------------------
enum class claim_token_change { keep, rotate, clear };

/// A node transition after provider I/O, applied only when the node still
/// has the (attempt_no, claim_token) the worker read.
struct node_update {
  domain::node_state next_state = domain::node_state::submitted;
  std::optional<std::string> provider_state;
  std::optional<std::string> provider_refs; // merged into the stored object
  std::optional<std::string> provider_ref_id;
  std::string error_code;
  std::string error_detail;
  std::optional<double> next_observe_in_seconds;
  bool observed = false; // last_observed_at, observe_count += 1
  claim_token_change token = claim_token_change::keep;
};

/// Copies a provider's answer into `u`: provider state and refs, the ref id
/// when the provider gave one (an empty one keeps the stored id), error.
void take_provider_result(node_update& u, const domain::step_result& r);

/// The node no longer has the attempt or claim token the worker read: the
/// transaction must be rolled back (nothing of it may land).
struct stale_write : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct update_effects {
  bool applied = false;
  bool needs_reconcile = false;
  bool pauses_dispatch = false;
  // The row as the write leaves it, for a reconcile in the same transaction
  // that read the node before the write.
  domain::node_state state_after = domain::node_state::blocked;
  std::string error_code_after;
  bool keeps_unknown_since = false; // else unknown_since is now or cleared
};

/// Locks the request row first (lock order: request, then node), then
/// applies `u` conditionally and records its event. Throws stale_write for a
/// stale attempt or token.
update_effects apply_node_update(pqxx::transaction_base& tx, const claimed_node& n,
                                 const node_update& u, event_batch& events);

/// How a result write shares its transaction with other results.
struct shared_write {
  /// Gathers the events and artifacts, written with the others' in one
  /// statement before the transaction commits (nullptr: written now).
  event_batch* events = nullptr;
  /// The transaction holds the request row already (lock order kept), so
  /// the request is written only when there is something to flag.
  bool request_locked = false;
  /// The caller reconciles the request in this transaction when the update
  /// needs it, so needs_reconcile is not raised for the sweep (the
  /// reconcile would only clear it again: a second write of the row).
  bool reconciled_here = false;
};

/// A node's result for apply_node_results: its steps are applied in order
/// as one row write (a submit answer and its inline first observation, say),
/// each step's event recorded in `events`.
struct node_result {
  const claimed_node* node = nullptr;
  std::vector<node_update> steps; // at least one
  event_batch* events = nullptr;
};

/// Applies `results` (distinct nodes) in one conditional statement, with
/// their requests flagged first as `shared` allows, then their events and
/// artifacts, in one round trip; answers each result's effects. Throws
/// stale_write when any node no longer holds its claim: the caller must roll
/// back, which discards everything else too.
std::vector<update_effects> apply_node_results(pqxx::transaction_base& tx,
                                               const std::vector<node_result>& results,
                                               shared_write shared = {});

/// apply_node_results' writes of `results`, whose rows `tx` holds locked
/// and re-checked against their claims (db::lock_requests_with_nodes), queued
/// on `batch` for the caller to run with its next statements: the requests
/// flagged as `shared` allows, then the conditional node update. Events and
/// artifacts go where `shared.events` says (written now without it).
std::vector<update_effects> queue_node_results(pqxx::transaction_base& tx,
                                               const std::vector<node_result>& results,
                                               shared_write shared, write_batch& batch);

/// apply_node_update, then the batch's events and artifacts, in one round
/// trip (the writes that end an observer or submit-result transaction).
/// Throws stale_write for a stale attempt or token: the caller must roll
/// back, which discards the events too.
update_effects apply_node_update_and_flush(pqxx::transaction_base& tx, const claimed_node& n,
                                           const node_update& u, event_batch& events,
                                           shared_write shared = {});

/// Appends an artifact (append-only).
void add_artifact(pqxx::transaction_base& tx, const std::string& node_id, int attempt_no,
                  const std::string& kind, const std::string& payload_json,
                  const std::string& payload_hash = {});

/// Each element of a JSON array of generated artifacts becomes a row.
void add_generated_artifacts(pqxx::transaction_base& tx, const std::string& node_id, int attempt_no,
                             const std::string& artifacts_json);

} // namespace mg::db
