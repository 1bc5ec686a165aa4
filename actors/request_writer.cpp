#include "actors/request_writer.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "actors/movements.hpp"
#include "actors/workers/node_result.hpp"
#include "config/log.hpp"
#include "config/metrics.hpp"
#include "domain/json_writer.hpp"
#include "persistence/movement_store.hpp"

namespace mg::actors {

namespace {

using self_ptr = request_writer_actor::stateful_pointer<request_writer_state>;

struct writer_meters {
  metrics::gauge& depth;
  metrics::histogram& batch_size;
  metrics::histogram& flush_seconds;
};

writer_meters& meters() {
  static writer_meters m{
      metrics::registry::global().get_gauge(
          "movegate_writer_queue_depth",
          "Node results and reconciles handed to the request writers, not answered yet."),
      metrics::registry::global().get_histogram(
          "movegate_writer_batch_size", "Node results and reconciles per request-writer flush.",
          {1, 2, 4, 8, 16, 32, 64, 128, 256}),
      metrics::registry::global().get_histogram(
          "movegate_writer_flush_seconds",
          "From a request writer's flush start to its commit, retries included.",
          metrics::duration_buckets())};
  return m;
}

/// What a flush decided for one item.
struct item_answer {
  bool held = false;  // another transaction holds its request: not written
  bool value = false; // a reconcile: it changed the request; a result: written
  std::string error;  // not empty: it failed
};

using answers = std::vector<item_answer>; // in the order of the items

/// One transaction over `items` (workers::write_results).
answers write_once(request_writer_state& st, const workers::engine& e,
                   const std::vector<const writer_item*>& items, int& activated) {
  std::vector<const workers::handed_result*> results;
  std::vector<std::string> reconciles;
  for (auto* item : items) {
    if (item->result)
      results.push_back(item->result.get());
    else
      reconciles.push_back(item->request_id);
  }
  auto written = workers::write_results(st.conn->get(), e, results, reconciles);
  if (written.committed)
    ++st.commits;
  activated += written.activated;
  answers out;
  size_t result = 0, reconcile = 0;
  for (auto* item : items) {
    item_answer a;
    if (item->result) {
      auto fate = written.results[result++];
      a.held = fate == workers::result_fate::held;
      a.value = fate == workers::result_fate::written;
    } else {
      auto& outcome = written.reconciles[reconcile++];
      a.held = outcome.held_elsewhere;
      a.value = outcome.changed;
    }
    out.push_back(a);
  }
  return out;
}

struct write_failure {
  std::string error;
  bool transient = false; // deadlocks or lost connections, every attempt
};

/// write_once, again after a deadlock or a lost connection. Reconcile is
/// idempotent and every result is re-checked against its claim, so a retry
/// after a commit whose outcome was lost writes nothing twice.
std::optional<answers> write_with_retries(request_writer_state& st, const workers::engine& e,
                                          const std::vector<const writer_item*>& items,
                                          int& activated, write_failure& failure) {
  auto& error = failure.error;
  failure.transient = true;
  for (int attempt = 1; attempt <= writer_flush_attempts; ++attempt) {
    try {
      return write_once(st, e, items, activated);
    } catch (const pqxx::transaction_rollback& ex) {
      error = ex.what();
    } catch (const std::exception& ex) {
      error = ex.what();
      if (!db::is_connection_error(ex)) {
        failure.transient = false;
        return std::nullopt;
      }
      st.conn->reset();
    }
    ++st.retries;
    log::warn("request writer batch retried",
              {{"attempt", attempt}, {"items", static_cast<long>(items.size())}, {"error", error}});
  }
  return std::nullopt;
}

/// Every item's answer: a batch that fails for a reason of its own (not a
/// deadlock or the connection) is written again one request per
/// transaction, so one bad request never sinks the others.
answers write_batch(request_writer_state& st, const workers::engine& e,
                    const std::vector<writer_item>& batch, int& activated) {
  std::vector<const writer_item*> all;
  for (auto& item : batch)
    all.push_back(&item);
  write_failure failure;
  if (auto done = write_with_retries(st, e, all, activated, failure))
    return *done;
  answers out(batch.size());
  std::map<std::string, std::vector<size_t>> by_request;
  for (size_t i = 0; i < batch.size(); ++i)
    by_request[batch[i].request_id].push_back(i);
  if (by_request.size() == 1 || failure.transient) {
    for (auto& a : out)
      a.error = failure.error;
    return out;
  }
  for (auto& [id, indexes] : by_request) {
    std::vector<const writer_item*> own_items;
    for (auto i : indexes)
      own_items.push_back(&batch[i]);
    write_failure own;
    auto done = write_with_retries(st, e, own_items, activated, own);
    for (size_t k = 0; k < indexes.size(); ++k) {
      if (done)
        out[indexes[k]] = (*done)[k];
      else
        out[indexes[k]].error = own.error;
    }
  }
  return out;
}

void schedule_flush(self_ptr self) {
  auto& st = self->state;
  if (st.flush_queued)
    return;
  st.flush_queued = true;
  self->send(self, flush_atom::value, false);
}

caf::typed_response_promise<bool> enqueue(self_ptr self, const std::string& request_id,
                                          handed_result_ptr result) {
  auto reply = self->make_response_promise<bool>();
  self->state.pending.push_back(
      {request_id, std::move(result), reply, std::chrono::steady_clock::now()});
  meters().depth.add(1);
  schedule_flush(self);
  return reply;
}

void schedule_held_retry(self_ptr self) {
  auto& st = self->state;
  if (st.retry_armed)
    return;
  st.retry_armed = true;
  self->delayed_send(self, held_request_retry, flush_atom::value, true);
}

/// Answers what the flush decided; an item whose request another
/// transaction holds stays pending for the next flush until its movement
/// actor gave up on it.
void answer(self_ptr self, std::vector<writer_item>& batch, const answers& decided,
            bool retry_held) {
  auto& st = self->state;
  const auto now = std::chrono::steady_clock::now();
  for (size_t i = 0; i < batch.size(); ++i) {
    auto& item = batch[i];
    auto& a = decided[i];
    if (a.error.empty() && a.held && retry_held && now - item.since < reconcile_timeout) {
      st.pending.push_back(std::move(item));
      continue;
    }
    meters().depth.add(-1);
    if (!a.error.empty()) {
      log::warn(item.result ? "node result not written; its node is looked at again"
                            : "reconcile failed; the sweep will retry",
                {{"request_id", item.request_id}, {"error", a.error}});
      item.reply.deliver(caf::make_error(caf::sec::runtime_error, a.error));
    } else if (a.held) {
      item.reply.deliver(caf::make_error(caf::sec::runtime_error, "request held elsewhere"));
    } else {
      if (!item.result)
        ++st.reconciled;
      else
        ++(a.value ? st.results : st.stale);
      item.reply.deliver(a.value);
    }
  }
}

/// Writes everything pending in one transaction (see write_batch).
void flush(self_ptr self, const std::shared_ptr<workers::engine_context>& ctx,
           const std::shared_ptr<runtime_links>& links, bool wakeups, bool retry_held) {
  auto& st = self->state;
  if (st.pending.empty())
    return;
  auto batch = std::move(st.pending);
  st.pending.clear();
  ++st.flushes;
  meters().batch_size.observe(static_cast<double>(batch.size()));
  const auto start = std::chrono::steady_clock::now();
  int activated = 0;
  auto decided = write_batch(st, ctx->e, batch, activated);
  meters().flush_seconds.observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (wakeups && activated > 0)
    links->wake_dispatchers_for(static_cast<size_t>(activated));
  answer(self, batch, decided, retry_held);
  if (!st.pending.empty())
    schedule_held_retry(self);
}

} // namespace

request_writer_actor::behavior_type
request_writer(request_writer_actor::stateful_pointer<request_writer_state> self,
               std::shared_ptr<workers::engine_context> ctx, std::string database_url,
               std::shared_ptr<runtime_links> links, bool wakeups) {
  self->state.conn = std::make_unique<db::connection_slot>(
      db::with_application_name(database_url, "movegate:request_writer"), db::plan_choice::generic);
  // On shutdown what was handed over is written before the writer goes;
  // what it cannot lock stays flagged needs_reconcile for the sweep.
  self->set_exit_handler([=](const caf::exit_msg& msg) {
    flush(self, ctx, links, wakeups, false);
    self->quit(msg.reason);
  });
  return {
      [=](reconcile_atom, const std::string& request_id) -> caf::typed_response_promise<bool> {
        return enqueue(self, request_id, nullptr);
      },
      [=](result_atom, const handed_result_ptr& result) -> caf::typed_response_promise<bool> {
        return enqueue(self, result->node.request_id, result);
      },
      [=](flush_atom, bool held_retry) {
        auto& st = self->state;
        (held_retry ? st.retry_armed : st.flush_queued) = false;
        flush(self, ctx, links, wakeups, true);
      },
      [=](status_atom) {
        auto& st = self->state;
        json::writer w;
        w.begin_object()
            .member("flushes", st.flushes)
            .member("commits", st.commits)
            .member("retries", st.retries)
            .member("reconciled", st.reconciled)
            .member("results", st.results)
            .member("stale", st.stale)
            .member("pending", static_cast<long>(st.pending.size()))
            .end_object();
        return w.str();
      },
  };
}

} // namespace mg::actors
