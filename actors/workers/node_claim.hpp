#pragma once
// A dispatch claim (SPEC §1): one READY node taken through preflight →
// prepare → (sign) inside its claim transaction up to its write-ahead
// SUBMITTING row, and the chain claim of the successors a committed result
// activates. Shared by the dispatcher's FIFO claims and the writer's
// transaction that commits a dispatcher's results.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "actors/workers/engine.hpp"
#include "domain/executor.hpp"
#include "persistence/context_loader.hpp"
#include "persistence/db.hpp"
#include "persistence/node_store.hpp"

namespace mg::workers {

/// Everything the submit step needs once the claim transaction committed.
struct ready_to_submit {
  db::claimed_node node; // as committed: SUBMITTING, new attempt and token
  domain::execution_context ctx;
  domain::prepared_action action;
  std::optional<domain::sign_result> signature;
  domain::executor* executor = nullptr;
  // When the latest predecessor settled (steady clock), for the hop metric.
  std::optional<std::chrono::steady_clock::time_point> predecessors_done;
};

/// How a claim ended.
struct claim_end {
  std::optional<ready_to_submit> submit; // to SUBMITTING (write_claims): submit once committed
  bool deferred = false;                 // still READY, waiting out its retry delay
  bool batchable = false;                // may share its claim transaction with others
  bool left = false;                     // not batchable in a batch: untouched, still READY
};

/// One node's claim inside `tx`: everything up to its SUBMITTING write.
/// With `batch_only`, a node that may not share the transaction is left
/// as it was (its row stays locked until `tx` ends, then a later pass
/// claims it on its own). With `prefetched`, its context as read with
/// others (prefetch_contexts).
claim_end run_claim(pqxx::work& tx, db::claimed_node n, const engine& e, db::event_batch& events,
                    std::vector<std::string>& first_dispatch, pass_result& out, bool batch_only,
                    db::context_result* prefetched = nullptr);

/// The writes a claim transaction gathered, before it commits: its
/// requests' first dispatches, every claim's events and artifacts, the
/// READY rows of the chain claim's `left_activated` and the SUBMITTING rows
/// of `claimed`, one statement each, in one round trip. Sets each claim's
/// token.
void write_claims(pqxx::work& tx, const std::vector<std::string>& first_dispatch,
                  db::event_batch& events, std::vector<ready_to_submit>& claimed, const engine& e,
                  const std::vector<db::activated_node>& left_activated = {});

/// The events of a claim of `n`, with the outbox part only when its request
/// has a callback_url.
db::event_batch events_for(const db::claimed_node& n, const engine& e);

/// The next attempts' contexts of `claimed`, read in one statement (a
/// claim that refuses its node before the context ignores it).
std::vector<db::context_result>
prefetch_contexts(pqxx::work& tx, const std::vector<db::claimed_node>& claimed, const engine& e);

/// Claims whose prepared actions are given back (executor.abandon) unless
/// the transaction that wrote their SUBMITTING rows commits.
struct pending_claims {
  std::vector<ready_to_submit> items;
  bool committed = false;
  pending_claims() = default;
  pending_claims(const pending_claims&) = delete;
  pending_claims& operator=(const pending_claims&) = delete;
  ~pending_claims();
};

/// SPEC §1 chain claim: the successors the results in `tx` activated
/// (their READY rows left to this claim, see db::claim_activated) are
/// claimed in the same transaction (straight to SUBMITTING, write-ahead,
/// their own tokens), under the batch-claim rule, up to the batch size; the
/// rest become READY for the FIFO. The dispatch gate and manual nodes are the
/// claim statement's filters. `before` runs first, in the claim's round
/// trip. The events in `gathered` (the transaction's, not written yet) are
/// written with the claims' own, in one statement. Nodes taken here are
/// subtracted from `out.activated`.
void chain_claim(pqxx::work& tx, const std::vector<db::activated_node>& activated, const engine& e,
                 pass_result& out, pending_claims& chained, db::write_batch& before,
                 db::event_batch& gathered);

} // namespace mg::workers
