#include "actors/workers/node_result.hpp"

#include <algorithm>
#include <set>

#include "config/log.hpp"
#include "persistence/movement_store.hpp"

namespace mg::workers {

namespace {

std::vector<std::string> sorted_unique(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

/// Whether `req` (locked) still holds `n` as its producer read it at claim.
bool holds_claim(const db::locked_request& req, const db::claimed_node& n) {
  for (auto& node : req.nodes)
    if (node.id == n.id)
      return node.attempt_no == n.attempt_no && node.claim_token == n.claim_token &&
             node.view.state == n.node_state && node.observe_count == n.observe_count;
  return false;
}

/// Sets each result's fate against the rows `locked` holds (written for
/// those to apply; a second result for a node already applied is stale)
/// and answers the ones to apply.
std::vector<size_t> current_results(const db::locked_requests& locked,
                                    const std::vector<const handed_result*>& results,
                                    std::vector<result_fate>& fates) {
  std::vector<size_t> to_apply;
  std::set<std::string> applied_nodes;
  for (size_t i = 0; i < results.size(); ++i) {
    auto& n = results[i]->node;
    auto req = locked.find(n.request_id);
    if (req == locked.end()) {
      fates[i] = result_fate::held;
    } else if (!holds_claim(req->second, n) || !applied_nodes.insert(n.id).second) {
      fates[i] = result_fate::stale;
      log::warn("stale node result dropped",
                {{"node_id", n.id},
                 {"attempt_no", n.attempt_no},
                 {"detail", "its state, attempt, claim token or observations moved on"}});
    } else {
      fates[i] = result_fate::written;
      to_apply.push_back(i);
    }
  }
  return to_apply;
}

/// What a write of `n` leaves in `req` for the reconcile that follows it.
void record_write(db::locked_request& req, const db::claimed_node& n,
                  const db::update_effects& fx) {
  req.dispatch_paused |= fx.pauses_dispatch;
  for (auto& node : req.nodes) {
    if (node.id != n.id)
      continue;
    node.view.state = fx.state_after;
    node.view.error_code = fx.error_code_after;
    if (!fx.keeps_unknown_since)
      node.view.unknown_for_seconds = 0;
  }
}

/// What apply_and_reconcile reconciled.
struct applied_results {
  std::vector<std::string> reconciled;         // request ids, sorted
  std::vector<db::reconcile_outcome> outcomes; // per reconciled id
};

/// Queues the writes of `results` (their rows locked in `locked` and
/// re-checked) on `pending`, then reconciles every request they or `also`
/// need on its locked rows as the writes leave them, each once and in id
/// order. Events join `gathered`; every write waits in `pending` for the
/// caller's next round trip. The READY rows of what `chaining` requests
/// activate are left to chain_claim_successors.
applied_results apply_and_reconcile(pqxx::transaction_base& tx, const engine& e,
                                    db::locked_requests& locked,
                                    const std::vector<db::node_result>& results,
                                    std::vector<std::string> also,
                                    const std::set<std::string>& chaining,
                                    db::event_batch& gathered, db::write_batch& pending) {
  auto effects = db::queue_node_results(tx, results, {&gathered, true, true}, pending);
  for (size_t k = 0; k < results.size(); ++k) {
    auto& node = *results[k].node;
    record_write(locked.at(node.request_id), node, effects[k]);
    if (effects[k].needs_reconcile)
      also.push_back(node.request_id);
  }
  applied_results out;
  out.reconciled = sorted_unique(std::move(also));
  out.outcomes = db::reconcile_locked_requests(
      tx, e.plans, locked, out.reconciled, e.reconcile_settings(), &gathered, &pending, chaining);
  return out;
}

/// The requests of the applied results that chain-claim their successors.
std::set<std::string> chaining_requests(const std::vector<const handed_result*>& results,
                                        const std::vector<size_t>& applied) {
  std::set<std::string> chaining;
  for (auto i : applied)
    if (results[i]->chain)
      chaining.insert(results[i]->node.request_id);
  return chaining;
}

/// SPEC §1 chain claim of the successors that the `chaining` requests
/// activated, in `tx` after `pending` (in the claim's round trip); the
/// `gathered` events are written with the claims' own.
void chain_claim_successors(pqxx::work& tx, const engine& e, const std::set<std::string>& chaining,
                            const applied_results& done, db::event_batch& gathered,
                            db::write_batch& pending, pending_claims& chained, pass_result& part) {
  std::vector<db::activated_node> activated;
  for (size_t k = 0; k < done.reconciled.size(); ++k)
    if (chaining.count(done.reconciled[k]))
      for (auto& key : done.outcomes[k].activated_keys)
        activated.push_back({done.reconciled[k], key});
  if (activated.empty()) {
    gathered.flush_into(tx, pending);
    if (!pending.empty())
      pending.run(tx);
    return;
  }
  // A successor's context reads its predecessors' artifacts.
  gathered.flush_artifacts_into(tx, pending);
  chain_claim(tx, activated, e, part, chained, pending, gathered);
}

} // namespace

batch_written write_results(pqxx::connection& c, const engine& e,
                            const std::vector<const handed_result*>& results,
                            const std::vector<std::string>& reconcile_ids, db::lock_wait wait) {
  batch_written out;
  out.results.assign(results.size(), result_fate::held);
  pqxx::work tx(c);
  std::vector<std::string> request_ids = reconcile_ids;
  for (auto* r : results)
    request_ids.push_back(r->node.request_id);
  auto locked = db::lock_requests_with_nodes(tx, request_ids, wait);
  auto to_apply = current_results(locked, results, out.results);
  // A retried batch writes its results again: the handed events stay whole.
  db::event_batch gathered("", e.settings.callback_max_attempts);
  std::vector<db::event_batch> events;
  events.reserve(to_apply.size());
  std::vector<db::node_result> applied;
  for (auto i : to_apply) {
    auto& r = *results[i];
    events.push_back(r.events);
    std::vector<db::node_update> steps{r.update};
    if (r.then)
      steps.push_back(*r.then);
    applied.push_back({&r.node, std::move(steps), &events.back()});
  }
  db::write_batch pending;
  const auto chaining = chaining_requests(results, to_apply);
  auto done =
      apply_and_reconcile(tx, e, locked, applied, reconcile_ids, chaining, gathered, pending);
  bool wrote = !applied.empty();
  for (auto& o : done.outcomes) {
    wrote |= o.wrote;
    out.activated += o.activated;
  }
  for (auto& id : reconcile_ids) {
    auto at = std::lower_bound(done.reconciled.begin(), done.reconciled.end(), id) -
              done.reconciled.begin();
    out.reconciles.push_back(done.outcomes[static_cast<size_t>(at)]);
  }
  pending_claims chained;
  chain_claim_successors(tx, e, chaining, done, gathered, pending, chained, out.chain);
  if (wrote) {
    tx.commit();
    chained.committed = true;
    out.committed = true;
    out.chained = std::move(chained.items);
  } else {
    tx.abort(); // only row locks: a COMMIT would flush WAL for nothing
  }
  out.activated += out.chain.activated;
  return out;
}

void hand_over_results(pqxx::connection& c, const engine& e,
                       const std::vector<std::shared_ptr<handed_result>>& results,
                       pass_result& out) {
  if (results.empty())
    return;
  std::vector<std::optional<bool>> answers;
  if (e.results) {
    answers = e.results->hand_over(results);
  } else {
    std::vector<const handed_result*> items;
    for (auto& r : results)
      items.push_back(r.get());
    try {
      auto written = write_results(c, e, items, {});
      out.activated += written.activated;
      for (auto fate : written.results)
        answers.push_back(fate == result_fate::held ? std::nullopt
                                                    : std::optional(fate == result_fate::written));
    } catch (const pqxx::transaction_rollback& ex) {
      // A deadlock the database broke: nothing landed; the nodes are
      // listed again.
      log::warn("node results rolled back; tried again soon", {{"error", ex.what()}});
      answers.assign(results.size(), std::nullopt);
    }
  }
  for (auto& a : answers) {
    if (!a)
      out.busy = true;
    else if (!*a)
      ++out.stale;
  }
}

} // namespace mg::workers
