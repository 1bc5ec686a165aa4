#include "actors/request_writer.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "actors/movements.hpp"
#include "config/log.hpp"
#include "config/metrics.hpp"
#include "domain/json_writer.hpp"
#include "persistence/movement_store.hpp"

namespace mg::actors {

namespace {

using self_ptr = request_writer_actor::stateful_pointer<request_writer_state>;
using outcomes = std::map<std::string, db::reconcile_outcome>;

struct writer_meters {
  metrics::gauge& depth;
  metrics::histogram& batch_size;
  metrics::histogram& flush_seconds;
};

writer_meters& meters() {
  static writer_meters m{metrics::registry::global().get_gauge(
                             "movegate_writer_queue_depth",
                             "Reconciles handed to the request writers and not answered yet."),
                         metrics::registry::global().get_histogram(
                             "movegate_writer_batch_size", "Requests per request-writer flush.",
                             {1, 2, 4, 8, 16, 32, 64, 128, 256}),
                         metrics::registry::global().get_histogram(
                             "movegate_writer_flush_seconds",
                             "From a request writer's flush start to its commit, retries included.",
                             metrics::duration_buckets())};
  return m;
}

/// One transaction over `ids` (sorted, unique); commits only if it wrote.
outcomes write_once(request_writer_state& st, const workers::engine& e,
                    const std::vector<std::string>& ids) {
  pqxx::work tx(st.conn->get());
  auto results = db::reconcile_requests(tx, e.plans, ids, e.reconcile_settings(), nullptr,
                                        db::lock_wait::skip_locked);
  bool wrote = std::any_of(results.begin(), results.end(), [](auto& r) { return r.wrote; });
  if (wrote) {
    tx.commit();
    ++st.commits;
  } else {
    tx.abort(); // only row locks: a COMMIT would flush WAL for nothing
  }
  outcomes out;
  for (size_t i = 0; i < ids.size(); ++i)
    out.emplace(ids[i], std::move(results[i]));
  return out;
}

struct write_failure {
  std::string error;
  bool transient = false; // deadlocks or lost connections, every attempt
};

/// write_once, again after a deadlock or a lost connection. Reconcile is
/// idempotent, so a retry after a commit whose outcome was lost is harmless.
std::optional<outcomes> write_with_retries(request_writer_state& st, const workers::engine& e,
                                           const std::vector<std::string>& ids,
                                           write_failure& failure) {
  auto& error = failure.error;
  failure.transient = true;
  for (int attempt = 1; attempt <= writer_flush_attempts; ++attempt) {
    try {
      return write_once(st, e, ids);
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
    log::warn(
        "request writer batch retried",
        {{"attempt", attempt}, {"requests", static_cast<long>(ids.size())}, {"error", error}});
  }
  return std::nullopt;
}

/// Every id's outcome, or its error: a batch that fails for a reason of its
/// own (not a deadlock or the connection) is written again one request per
/// transaction, so one bad request never sinks the others.
outcomes write_batch(request_writer_state& st, const workers::engine& e,
                     const std::vector<std::string>& ids,
                     std::map<std::string, std::string>& errors) {
  write_failure failure;
  if (auto all = write_with_retries(st, e, ids, failure))
    return *all;
  outcomes out;
  if (ids.size() == 1 || failure.transient) {
    for (auto& id : ids)
      errors[id] = failure.error;
    return out;
  }
  for (auto& id : ids) {
    write_failure own;
    if (auto one = write_with_retries(st, e, {id}, own))
      out.insert(one->begin(), one->end());
    else
      errors[id] = own.error;
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

void schedule_held_retry(self_ptr self) {
  auto& st = self->state;
  if (st.retry_armed)
    return;
  st.retry_armed = true;
  self->delayed_send(self, held_request_retry, flush_atom::value, true);
}

/// Answers what the flush decided; a request another transaction holds
/// stays pending for the next flush until the movement actor gave up on it.
void answer(self_ptr self, std::vector<writer_item>& batch, const outcomes& done,
            const std::map<std::string, std::string>& errors, bool retry_held) {
  auto& st = self->state;
  const auto now = std::chrono::steady_clock::now();
  for (auto& item : batch) {
    auto failed = errors.find(item.request_id);
    auto result = done.find(item.request_id);
    if (failed == errors.end() && result != done.end() && result->second.held_elsewhere &&
        retry_held && now - item.since < reconcile_timeout) {
      st.pending.push_back(std::move(item));
      continue;
    }
    meters().depth.add(-1);
    if (failed != errors.end()) {
      log::warn("reconcile failed; the sweep will retry",
                {{"request_id", item.request_id}, {"error", failed->second}});
      item.reply.deliver(caf::make_error(caf::sec::runtime_error, failed->second));
    } else if (result == done.end() || result->second.held_elsewhere) {
      item.reply.deliver(caf::make_error(caf::sec::runtime_error, "request held elsewhere"));
    } else {
      ++st.reconciled;
      item.reply.deliver(result->second.changed);
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
  std::vector<std::string> ids;
  for (auto& item : batch)
    ids.push_back(item.request_id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  ++st.flushes;
  meters().batch_size.observe(static_cast<double>(ids.size()));
  const auto start = std::chrono::steady_clock::now();
  std::map<std::string, std::string> errors;
  auto done = write_batch(st, ctx->e, ids, errors);
  meters().flush_seconds.observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  long activated = 0;
  for (auto& [id, outcome] : done)
    activated += outcome.activated;
  if (wakeups && activated > 0)
    links->wake_dispatchers_for(static_cast<size_t>(activated));
  answer(self, batch, done, errors, retry_held);
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
        auto reply = self->make_response_promise<bool>();
        self->state.pending.push_back({request_id, reply, std::chrono::steady_clock::now()});
        meters().depth.add(1);
        schedule_flush(self);
        return reply;
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
            .member("pending", static_cast<long>(st.pending.size()))
            .end_object();
        return w.str();
      },
  };
}

} // namespace mg::actors
