#include "actors/workers/node_dispatcher.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "actors/workers/node_claim.hpp"
#include "actors/workers/node_result.hpp"
#include "actors/workers/observation.hpp"
#include "config/log.hpp"
#include "config/metrics.hpp"
#include "domain/json.hpp"
#include "domain/json_writer.hpp"
#include "domain/provider_answer.hpp"
#include "domain/step_proof.hpp"
#include "domain/timing.hpp"
#include "persistence/claim_store.hpp"
#include "persistence/db.hpp"
#include "persistence/movement_store.hpp"
#include "persistence/node_store.hpp"

namespace mg::workers {

using domain::node_state;

namespace {

constexpr int candidate_window = 8;
constexpr int max_chain_steps = 16;

/// A submit answer checked (SPEC §4): one it may not give leaves the node
/// UNKNOWN with PROVIDER_PROTOCOL_ERROR, settled at once.
domain::step_result checked_submit(domain::step_result result) {
  if (!result.next_state)
    result.next_state = node_state::unknown; // no answer is "we do not know"
  return domain::checked_answer(domain::executor_step::submit, std::move(result));
}

/// We asked and do not know the answer: recovery finds out.
domain::step_result unanswered_submit(const std::string& why) {
  domain::step_result unknown;
  unknown.next_state = node_state::unknown;
  unknown.error_code = "SUBMIT_ERROR";
  unknown.error_detail = why;
  return unknown;
}

/// executor.submit for one node.
domain::step_result call_submit(const ready_to_submit& r) {
  auto answer = [&] {
    try {
      return checked_submit(
          r.executor->submit(r.ctx, r.action, r.signature ? &*r.signature : nullptr));
    } catch (const domain::provider_protocol_error& ex) {
      return domain::protocol_violation(domain::executor_step::submit, {}, ex.what());
    } catch (const std::exception& ex) {
      return unanswered_submit(ex.what());
    }
  }();
  answer.answered_at = std::chrono::system_clock::now();
  return answer;
}

/// The submits of a claimed batch, each executor's share in one
/// submit_many call; answers in the batch's order.
std::vector<domain::step_result> submit_all(const std::vector<ready_to_submit>& batch) {
  if (batch.size() == 1)
    return {call_submit(batch.front())};
  std::vector<domain::step_result> answers(batch.size());
  std::map<domain::executor*, std::vector<size_t>> shares;
  for (size_t i = 0; i < batch.size(); ++i)
    shares[batch[i].executor].push_back(i);
  for (auto& [executor, items] : shares) {
    std::vector<domain::submit_call> calls;
    for (auto i : items)
      calls.push_back(
          {&batch[i].ctx, &batch[i].action, batch[i].signature ? &*batch[i].signature : nullptr});
    try {
      auto got = executor->submit_many(calls);
      if (got.size() != calls.size())
        throw domain::provider_protocol_error("submit_many answered " + std::to_string(got.size()) +
                                              " of " + std::to_string(calls.size()) + " calls");
      for (size_t j = 0; j < items.size(); ++j)
        answers[items[j]] = checked_submit(std::move(got[j]));
    } catch (const domain::provider_protocol_error& ex) {
      for (auto i : items)
        answers[i] = domain::protocol_violation(domain::executor_step::submit, {}, ex.what());
    } catch (const std::exception& ex) {
      for (auto i : items)
        answers[i] = unanswered_submit(ex.what());
    }
    const auto answered_at = std::chrono::system_clock::now();
    for (auto i : items)
      answers[i].answered_at = answered_at;
  }
  return answers;
}

/// A submitted node with its provider's answers, waiting for its result
/// commit.
struct submitted {
  ready_to_submit r;
  domain::step_result answer;
  std::optional<domain::step_result> observation; // SPEC §1 inline first observation
};

bool in_flight(node_state s) {
  return s == node_state::submitted || s == node_state::observing;
}

db::node_update submit_update(const ready_to_submit& r, const domain::step_result& s) {
  db::node_update u;
  u.next_state = *s.next_state;
  db::take_provider_result(u, s);
  if (in_flight(u.next_state))
    u.next_observe_in_seconds = domain::observe_delay(r.node.action_type, s.retry_after_seconds);
  return u;
}

/// SPEC §1 inline first observation: an answer that asks to be observed at
/// once is observed here, outside any lock, instead of by the observer
/// (wake-ups off: never, as the reference).
std::optional<domain::step_result> observe_at_once(const ready_to_submit& r,
                                                   const domain::step_result& s, const engine& e) {
  if (!e.settings.wakeups_enabled)
    return std::nullopt;
  auto u = submit_update(r, s);
  if (!in_flight(u.next_state) || u.next_observe_in_seconds.value_or(1) != 0)
    return std::nullopt;
  auto ctx = r.ctx;
  ctx.provider_refs = json::merge_members(r.node.provider_refs, s.provider_refs);
  return call_observe(r.node, ctx, e);
}

/// The node as the observer would have read it after the submit result.
db::claimed_node after_submit(const ready_to_submit& r, const db::node_update& u) {
  db::claimed_node n = r.node;
  n.node_state = u.next_state;
  n.provider_refs = json::merge_members(n.provider_refs, u.provider_refs.value_or("{}"));
  return n;
}

/// One submitted node's result: the submit answer, then its inline first
/// observation when there is one, as the steps of one row write, with
/// their artifacts and events.
handed_result result_of(const submitted& item, const engine& e, pass_result& out) {
  const auto& r = item.r;
  handed_result h{r.node, submit_update(r, item.answer), events_for(r.node, e)};
  h.events.add_artifact(
      {r.node.id, r.node.attempt_no, "submit_proof", domain::step_proof_json(item.answer), ""});
  h.events.add_generated_artifacts(r.node.id, r.node.attempt_no, item.answer.generated_artifacts);
  if (!item.observation) {
    out.wake_observer |= in_flight(h.update.next_state);
    return h;
  }
  auto observed = after_submit(r, h.update);
  h.then = observation_update(observed, *item.observation);
  add_observation_artifacts(h.events, observed, *item.observation);
  if (h.then->next_observe_in_seconds && *h.then->next_observe_in_seconds == 0)
    out.wake_observer = true;
  return h;
}

/// SPEC §1: a dispatcher writes its claim's results itself, in one
/// transaction of write_results (the request writers' own), waiting for
/// its requests' locks: a submit answer cannot be dropped and listed again
/// as an observation can, and the request writers' shards would split the
/// batch over several transactions. A commit that fails on a lost
/// connection is retried after reconnecting (and one rolled back by a
/// deadlock at once), still conditional on the claim tokens; if the
/// database stays away, recovery finds the SUBMITTING nodes after their
/// grace. A retry claims no successors: whatever sank the first try may
/// have been the chain claim, and the results must land.
batch_written write_with_retry(db::connection_slot& conn, std::vector<handed_result>& results,
                               const engine& e, bool chain) {
  constexpr int attempts = 30;
  std::vector<const handed_result*> items;
  for (auto& r : results)
    items.push_back(&r);
  for (int i = 1;; ++i) {
    const bool chained = chain && i == 1;
    for (auto& r : results)
      r.chain = chained;
    try {
      return write_results(conn.get(), e, items, {}, db::lock_wait::wait);
    } catch (const pqxx::transaction_rollback& ex) {
      // Deadlock or serialization failure: nothing was written; try again.
      if (i == attempts)
        throw;
      log::warn("submit result commit rolled back; retrying",
                {{"nodes", static_cast<int>(items.size())}, {"try", i}, {"error", ex.what()}});
    } catch (const std::exception& ex) {
      const bool connection = db::is_connection_error(ex);
      if ((!connection && !chained) || i == attempts)
        throw;
      if (!connection) {
        log::warn("submit results failed with their chain claim; retrying without it",
                  {{"nodes", static_cast<int>(items.size())}, {"error", ex.what()}});
        continue;
      }
      conn.reset();
      log::warn("submit result commit lost its connection; retrying",
                {{"nodes", static_cast<int>(items.size())}, {"try", i}});
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
}

/// Writes the results with their reconciles and chain claims; returns the
/// successors chain-claimed with them, to submit.
std::vector<ready_to_submit> write_submitted(db::connection_slot& conn,
                                             const std::vector<submitted>& items, const engine& e,
                                             bool chain, pass_result& out) {
  std::vector<handed_result> results;
  for (auto& item : items)
    results.push_back(result_of(item, e, out));
  auto done = write_with_retry(conn, results, e, chain);
  for (auto fate : done.results)
    out.stale += fate == result_fate::written ? 0 : 1;
  out.activated += done.activated;
  out.processed += done.chain.processed;
  out.reconcile.insert(out.reconcile.end(), done.chain.reconcile.begin(),
                       done.chain.reconcile.end());
  return std::move(done.chained);
}

/// Where dispatcher `lane` (of `lanes`) starts its walk of `listed`
/// candidates: lane k at k/lanes of the list.
size_t walk_start(int lane, int lanes, size_t listed) {
  if (lanes <= 1)
    return 0;
  return (static_cast<size_t>(lane % lanes) * listed / static_cast<size_t>(lanes)) % listed;
}

/// Walks the unlocked FIFO candidates and claims free ones. The first claim
/// is the first statement of its own transaction: a miss rolls that
/// transaction back (releasing the skipped attempt's partial locks, as the
/// reference's miss-only savepoint does) and a hit goes on in it, so a hit
/// costs no SAVEPOINT/RELEASE round trips. When that node claims in batch,
/// further listed nodes of other requests that do too join the transaction
/// (all claimed in one wait-free statement), up to the batch size; one
/// COMMIT makes all their SUBMITTING rows durable. Returns the nodes to
/// submit.
std::vector<ready_to_submit> claim_and_prepare(db::connection_slot& conn, const engine& e, int lane,
                                               pass_result& out) {
  const auto& network_class = e.settings.network_class;
  const size_t batch_size =
      e.settings.wakeups_enabled
          ? static_cast<size_t>(std::max(1, e.settings.node_dispatch_batch_size))
          : 1;
  const int window = std::max(candidate_window, static_cast<int>(batch_size));
  std::vector<std::string> tried; // missed or deferred in this pass
  size_t deferred = 0;
  for (;;) {
    std::vector<std::string> ids;
    {
      pqxx::nontransaction list(conn.get());
      ids = db::dispatch_candidates(list, network_class, tried, window);
    }
    const size_t listed = ids.size();
    // Parallel dispatchers list the same FIFO head: each starts its walk at
    // its own share of it, spread evenly, so they do not all race for the
    // oldest nodes (nor a batch claim for its neighbour's) and pay a miss
    // each. The walk still covers every listed candidate.
    if (tried.empty() && listed > 0)
      std::rotate(ids.begin(), ids.begin() + walk_start(lane, e.settings.node_dispatchers, listed),
                  ids.end());
    std::vector<ready_to_submit> batch;
    db::event_batch gathered("", e.settings.callback_max_attempts);
    // A deferred node was looked at, not worked on: alone it still keeps
    // the drain going (processed 1), but it does not add to the count.
    auto finish = [&] {
      if (out.processed == 0 && deferred > 0)
        out.processed = 1;
      return std::move(batch);
    };
    // One claimed node's end, gathered into the transaction's writes.
    auto take = [&](const db::claimed_node& n, db::event_batch& events, claim_end& end) {
      if (!end.deferred)
        ++out.processed;
      events.move_into(gathered);
      if (end.submit)
        batch.push_back(std::move(*end.submit));
      else if (end.deferred) {
        // Nothing was done for it: the nodes behind it are not held up.
        tried.push_back(n.id);
        ++deferred;
      }
    };
    for (size_t pos = 0; pos < ids.size(); ++pos) {
      pqxx::work tx(conn.get());
      std::vector<std::string> first_dispatch;
      auto claimed = db::claim_for_dispatch(tx, ids[pos], network_class,
                                            db::claim_scope::first_in_transaction);
      if (!claimed) {
        tx.abort(); // releases any partial lock
        tried.push_back(ids[pos]);
        continue;
      }
      auto events = events_for(*claimed, e);
      auto end = run_claim(tx, *claimed, e, events, first_dispatch, out, false);
      take(*claimed, events, end);
      const bool batching = end.batchable && batch_size > 1;
      if (batching) {
        // The rest of the listed candidates that claim in batch join this
        // transaction, claimed in one statement, one node per request.
        std::set<std::string> requests{claimed->request_id};
        size_t claims = 1;
        const std::vector<std::string> rest(ids.begin() + static_cast<long>(pos) + 1, ids.end());
        auto joining = db::claim_for_dispatch_batch(tx, rest, network_class);
        auto contexts = prefetch_contexts(tx, joining, e);
        for (size_t i = 0; i < joining.size() && claims < batch_size; ++i) {
          auto& n = joining[i];
          if (!requests.insert(n.request_id).second)
            continue; // the next pass takes it
          auto more = events_for(n, e);
          auto joined = run_claim(tx, n, e, more, first_dispatch, out, true, &contexts[i]);
          if (joined.left)
            continue;
          ++claims;
          take(n, more, joined);
        }
      }
      write_claims(tx, first_dispatch, gathered, batch, e);
      tx.commit();
      if (batching || !batch.empty() || !end.deferred)
        return finish(); // a batch, or a node on its own submitted or settled
    }
    if (static_cast<int>(listed) < window) {
      // Work exists but its rows are busy (observer or reconcile hold the
      // request): look again shortly instead of after a full interval.
      if (tried.size() > deferred)
        out.busy = true;
      return finish();
    }
  }
}

/// The hop (the bench's definition, as the engine sees it): the latest
/// predecessor settled → its successor's submit accepted. Observed once per
/// accepted submit, so a scrape costs nothing for it.
metrics::histogram& hop_histogram() {
  static auto& h = metrics::registry::global().get_histogram(
      "movegate_hop_latency_seconds",
      "Latest predecessor settled to the successor's submit accepted.",
      metrics::duration_buckets());
  return h;
}

void record_hop(const ready_to_submit& r, const domain::step_result& s) {
  if (!r.predecessors_done || !s.next_state)
    return;
  auto next = *s.next_state;
  if (next != node_state::submitted && next != node_state::observing &&
      next != node_state::completed)
    return;
  hop_histogram().observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - *r.predecessors_done)
          .count());
}

/// The result commits on /metrics: how many results each commits, how long
/// it takes (retries included), and how many answered results wait for
/// theirs right now.
struct result_commit_meters {
  metrics::histogram& batch_size;
  metrics::histogram& seconds;
  metrics::gauge& waiting;
};

result_commit_meters& result_commits() {
  static result_commit_meters m{
      metrics::registry::global().get_histogram(
          "movegate_result_commit_batch_size",
          "Node results (with their reconciles and chain claims) committed per transaction.",
          {1, 2, 4, 8, 16, 32, 64, 128, 256}),
      metrics::registry::global().get_histogram(
          "movegate_result_commit_seconds",
          "From node results handed to their commit to the commit acknowledged, retries included.",
          metrics::duration_buckets()),
      metrics::registry::global().get_gauge(
          "movegate_results_awaiting_commit",
          "Executor answers received whose result transaction has not committed yet.")};
  return m;
}

/// Counts `n` results as waiting for their commit while it lives.
class awaiting_commit {
public:
  explicit awaiting_commit(size_t n) : n_(static_cast<double>(n)) {
    result_commits().waiting.add(n_);
  }
  awaiting_commit(const awaiting_commit&) = delete;
  awaiting_commit& operator=(const awaiting_commit&) = delete;
  ~awaiting_commit() { result_commits().waiting.add(-n_); }

private:
  double n_;
};

bool stop_requested(const std::atomic<bool>* stopping) {
  return stopping && stopping->load(std::memory_order_acquire);
}

/// Submits `claimed` (their SUBMITTING rows committed) and commits their
/// results; returns the successors chain-claimed with them. A stop asked
/// for while the submits ran cancels the chain claim: a draining runtime
/// claims nothing new.
std::vector<ready_to_submit>
submit_and_commit(db::connection_slot& conn, std::vector<ready_to_submit> claimed, const engine& e,
                  bool chain, const std::atomic<bool>* stopping, pass_result& out) {
  auto answers = submit_all(claimed);
  awaiting_commit waiting(answers.size());
  chain = chain && !stop_requested(stopping);
  std::vector<submitted> results;
  for (size_t i = 0; i < claimed.size(); ++i) {
    auto& r = claimed[i];
    auto& answer = answers[i];
    if (answer.error_code == domain::fenced_error_code) {
      ++out.stale;
      log::warn("submit refused: attempt was fenced by recovery", {{"node_id", r.node.id}});
      continue;
    }
    record_hop(r, answer);
    auto observation = observe_at_once(r, answer, e);
    results.push_back({std::move(r), std::move(answer), std::move(observation)});
  }
  if (results.empty())
    return {};
  const auto handed_at = std::chrono::steady_clock::now();
  auto chained = write_submitted(conn, results, e, chain, out);
  result_commits().seconds.observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - handed_at).count());
  result_commits().batch_size.observe(static_cast<double>(results.size()));
  return chained;
}

} // namespace

pass_result dispatch_pass(db::connection_slot& conn, const engine& e, int lane,
                          const std::atomic<bool>* stopping) {
  pass_result out;
  hop_histogram(); // exported (empty) before the first hop
  result_commits();
  auto batch = claim_and_prepare(conn, e, lane, out);
  // SPEC §1 chain claim (off with wake-ups off, as the reference). A pass
  // follows chains a bounded number of steps, so one long chain does not
  // keep its dispatcher from the FIFO.
  for (int step = 1; !batch.empty(); ++step)
    batch = submit_and_commit(conn, std::move(batch), e,
                              e.settings.wakeups_enabled && step < max_chain_steps, stopping, out);
  return out;
}

} // namespace mg::workers
