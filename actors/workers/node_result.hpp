#pragma once
// Node results handed over after their claim ended, and the one transaction
// that writes a batch of them with their requests' reconciles (SPEC §1's
// writer).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/workers/engine.hpp"
#include "actors/workers/node_claim.hpp"
#include "persistence/movement_store.hpp"
#include "persistence/node_store.hpp"

namespace mg::workers {

/// A node result whose claim transaction has ended: the node as its
/// producer read it at claim (the re-check under the writer's lock compares
/// id, attempt_no, claim_token, node_state and observe_count), the
/// transition and its events.
struct handed_result {
  db::claimed_node node;
  db::node_update update;
  db::event_batch events;
  /// A second step of the same row write: the dispatcher's inline first
  /// observation of its submit answer.
  std::optional<db::node_update> then{};
  /// A dispatcher's submit result: the successors it activates may be
  /// chain-claimed in the transaction that writes it (SPEC §1).
  bool chain = false;
};

/// What became of a handed result in a batch.
enum class result_fate {
  written,
  stale, // the node moved on since its claim: dropped
  held,  // another transaction holds its request: not tried
};

struct batch_written {
  std::vector<result_fate> results;              // per result, in order
  std::vector<db::reconcile_outcome> reconciles; // per reconcile id, in order
  int activated = 0;                             // nodes the batch made READY
  bool committed = false;
  /// Successors chain-claimed for the `chain` results, committed
  /// SUBMITTING: to submit.
  std::vector<ready_to_submit> chained;
  /// The chain claim's own outcome: nodes it processed, requests whose
  /// claim settled a node (to reconcile), nodes taken from `activated`.
  pass_result chain;
};

/// One transaction over `results` and `reconcile_ids`: their request rows
/// locked in id order — with SKIP LOCKED, a held request is left for later;
/// with `wait`, its lock is waited for — each result re-checked under the
/// lock against its claim and applied when current, every touched request
/// reconciled on its locked current rows, the successors that the `chain`
/// results activate chain-claimed, all events written; committed only when
/// something was written, rolled back otherwise. Throws what the database
/// throws (nothing landed, and what a chain claim prepared is abandoned).
batch_written write_results(pqxx::connection& c, const engine& e,
                            const std::vector<const handed_result*>& results,
                            const std::vector<std::string>& reconcile_ids,
                            db::lock_wait wait = db::lock_wait::skip_locked);

/// Where a pass hands its results. The runtime's sink routes them through
/// the movement actors to the request writers; without one a pass writes
/// them itself (write_results on its own connection).
class result_sink {
public:
  virtual ~result_sink() = default;
  /// Hands `results` over and waits for each answer: true written, false
  /// stale (dropped), nullopt not written (held too long, or an error): the
  /// node is listed again by a later pass.
  virtual std::vector<std::optional<bool>>
  hand_over(const std::vector<std::shared_ptr<handed_result>>& results) = 0;
};

/// Hands `results` to `e.results`, or writes them on `c` when the engine has
/// no sink; counts stale ones in `out` and flags `out.busy` for those not
/// written, so the pass looks again soon.
void hand_over_results(pqxx::connection& c, const engine& e,
                       const std::vector<std::shared_ptr<handed_result>>& results,
                       pass_result& out);

} // namespace mg::workers
