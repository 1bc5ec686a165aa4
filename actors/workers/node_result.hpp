#pragma once
// Node results handed over after their claim ended, and the one transaction
// that writes a batch of them with their requests' reconciles (SPEC §1's
// writer).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/workers/engine.hpp"
#include "persistence/movement_store.hpp"
#include "persistence/node_store.hpp"

namespace mg::workers {

/// An observer's or recovery's result for a node whose claim transaction
/// was rolled back: the node as its producer read it at claim (the re-check
/// under the writer's lock compares id, attempt_no, claim_token, node_state
/// and observe_count), the transition and its events.
struct handed_result {
  db::claimed_node node;
  db::node_update update;
  db::event_batch events;
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
};

/// What apply_and_reconcile reconciled.
struct applied_results {
  std::vector<std::string> reconciled;         // request ids, sorted
  std::vector<db::reconcile_outcome> outcomes; // per reconciled id
};

/// Applies `results` (their rows locked and re-checked) in `tx`, then
/// reconciles every request they or `also` need on its locked current rows,
/// each once and in id order. Events join `gathered`; the reconciles' writes
/// wait in `pending` for the caller's next round trip.
applied_results apply_and_reconcile(pqxx::transaction_base& tx, const engine& e,
                                    const std::vector<db::node_result>& results,
                                    std::vector<std::string> also, db::event_batch& gathered,
                                    db::write_batch& pending, db::lock_wait wait);

/// One transaction over `results` and `reconcile_ids`: their request rows
/// locked in id order with SKIP LOCKED (a held request is left for later),
/// each result re-checked under the lock against its claim and applied when
/// current, every touched request reconciled on its locked current rows,
/// all events written; committed only when something was written, rolled
/// back otherwise. Throws what the database throws (nothing landed).
batch_written write_results(pqxx::connection& c, const engine& e,
                            const std::vector<const handed_result*>& results,
                            const std::vector<std::string>& reconcile_ids);

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
