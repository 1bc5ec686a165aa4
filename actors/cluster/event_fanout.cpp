#include "actors/cluster/event_fanout.hpp"

#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "config/log.hpp"
#include "domain/api.hpp"
#include "domain/json_writer.hpp"
#include "domain/movement_requests.hpp"
#include "persistence/db.hpp"
#include "persistence/event_feed.hpp"
#include "persistence/request_view.hpp"

namespace mg::actors {

namespace {

using call_result = std::tuple<int32_t, std::string>;
using clock_type = std::chrono::steady_clock;

call_result error_body(int32_t status, const std::string& code, const std::string& message) {
  return {status, api::error_body({status, code, message, {}})};
}

struct subscriber {
  caf::actor handle;
  /// request_id ("" = every request) → deliver events with seq above this.
  std::map<std::string, uint64_t> filters;
};

struct fanout_state {
  db::connection_pool* pool = nullptr;
  std::shared_ptr<std::atomic<uint64_t>> count;
  event_fanout_config cfg;
  std::map<caf::actor_addr, subscriber> subscribers;
  /// Every event up to here has been pushed (or was before any subscriber);
  /// meaningful only while `polling`.
  uint64_t cursor = 0;
  bool polling = false;
  uint64_t generation = 0;
  std::optional<clock_type::time_point> gap_since;
  uint64_t delivered = 0;
  uint64_t errors = 0;
  static inline const char* name = "event_fanout";
};

using fanout_pointer = event_fanout_actor::stateful_pointer<fanout_state>;

size_t subscription_count(const fanout_state& st) {
  size_t n = 0;
  for (auto& [_, s] : st.subscribers)
    n += s.filters.size();
  return n;
}

void publish_count(fanout_state& st) {
  st.count->store(st.subscribers.size());
}

/// Runs `f` on a pooled read-only transaction, dropping a broken connection.
template <class F> auto with_read(fanout_state& st, F&& f) {
  auto lease = st.pool->acquire();
  try {
    pqxx::read_transaction tx(*lease);
    return f(tx);
  } catch (const std::exception& e) {
    if (db::is_connection_error(e) || !lease->is_open())
      lease.discard();
    throw;
  }
}

// anon_send: a typed actor may not send() to the dynamically typed
// subscriber handle, and the subscriber never answers anyway.
void push(fanout_pointer self, subscriber& s, const db::fed_event& e) {
  for (auto& [request, after] : s.filters)
    if ((request.empty() || request == e.request_id) && e.seq > after) {
      self->anon_send(s.handle, event_atom::value, e.request_id, e.event_id, e.seq, e.json);
      ++self->state.delivered;
      return; // once per event, however many filters match
    }
}

void schedule(fanout_pointer self, std::chrono::milliseconds after) {
  self->delayed_send(self, after, tick_atom::value, ++self->state.generation);
}

/// One poll: read rows after the cursor, push the gap-free prefix.
/// Returns whether a full batch was read (more may be waiting).
bool poll_once(fanout_pointer self) {
  auto& st = self->state;
  auto rows = with_read(st, [&](pqxx::transaction_base& tx) {
    return db::events_after(tx, st.cursor, "", st.cfg.batch);
  });
  for (auto& e : rows) {
    if (e.seq != st.cursor + 1) {
      auto now = clock_type::now();
      if (!st.gap_since)
        st.gap_since = now;
      if (now - *st.gap_since < st.cfg.gap_hold)
        return false; // the missing seq may still commit: wait for it
      log::warn("event fan-out skips a seq hole (rolled-back insert)",
                {{"from", std::to_string(st.cursor + 1)}, {"to", std::to_string(e.seq - 1)}});
    }
    st.gap_since.reset();
    for (auto& [_, s] : st.subscribers)
      push(self, s, e);
    st.cursor = e.seq;
  }
  return static_cast<int>(rows.size()) == st.cfg.batch;
}

void forget(fanout_pointer self, const caf::actor_addr& who) {
  auto& st = self->state;
  auto it = st.subscribers.find(who);
  if (it == st.subscribers.end())
    return;
  self->demonitor(it->second.handle);
  st.subscribers.erase(it);
  publish_count(st);
}

call_result subscribe(fanout_pointer self, const std::string& request_id,
                      const std::string& after_event_id, const caf::actor& who) {
  log::component_scope component("cluster");
  auto& st = self->state;
  if (!who)
    return error_body(400, "bad_request", "subscriber actor is missing");
  if (!request_id.empty() && !domain::is_uuid(request_id))
    return error_body(400, "bad_request", "request_id is not a UUID");
  if (!after_event_id.empty() && !domain::is_uuid(after_event_id))
    return error_body(400, "bad_request", "after_event_id is not a UUID");
  std::optional<uint64_t> from;
  std::vector<db::fed_event> backfill;
  std::string missing;
  try {
    with_read(st, [&](pqxx::transaction_base& tx) {
      if (!request_id.empty() && !db::request_exists(tx, request_id)) {
        missing = "no movement " + request_id;
        return 0;
      }
      if (!after_event_id.empty()) {
        from = db::event_seq(tx, after_event_id, request_id);
        if (!from) {
          missing = "no event " + after_event_id + (request_id.empty() ? "" : " of " + request_id);
          return 0;
        }
      } else {
        from = db::last_event_seq(tx);
      }
      // Resuming behind the cursor: what the fan-out already pushed to the
      // others is read here, the rest arrives with the next ticks.
      if (st.polling && *from < st.cursor) {
        uint64_t at = *from;
        while (at < st.cursor && static_cast<int>(backfill.size()) < st.cfg.max_backfill) {
          auto page = db::events_after(tx, at, request_id, st.cfg.batch);
          if (page.empty())
            break;
          for (auto& e : page)
            if (e.seq <= st.cursor)
              backfill.push_back(std::move(e));
          at = page.back().seq;
        }
      }
      return 0;
    });
  } catch (const std::exception& e) {
    ++st.errors;
    log::warn("event subscribe failed", {{"error", e.what()}});
    return error_body(503, "unavailable", "database unavailable; retry later");
  }
  if (!missing.empty())
    return error_body(404, "not_found", missing);
  for (auto& e : backfill)
    if (e.seq <= st.cursor) {
      self->anon_send(who, event_atom::value, e.request_id, e.event_id, e.seq, e.json);
      ++st.delivered;
    }
  auto& s = st.subscribers[who.address()];
  if (!s.handle) {
    s.handle = who;
    self->monitor(who);
  }
  // Everything up to the cursor is backfilled; beyond it the ticks deliver.
  s.filters[request_id] = st.polling ? std::max(*from, st.cursor) : *from;
  if (!st.polling) {
    st.polling = true;
    st.cursor = *from;
    st.gap_since.reset();
    schedule(self, st.cfg.poll_interval);
  }
  publish_count(st);
  log::info("event subscription", {{"request_id", request_id.empty() ? "*" : request_id},
                                   {"subscribers", static_cast<long long>(st.subscribers.size())}});
  return {200, json::writer()
                   .begin_object()
                   .member("request_id", request_id)
                   .member("after_seq", *from)
                   .end_object()
                   .str()};
}

} // namespace

event_fanout_actor::behavior_type event_fanout(fanout_pointer self, db::connection_pool* pool,
                                               std::shared_ptr<std::atomic<uint64_t>> count,
                                               event_fanout_config cfg) {
  auto& st = self->state;
  st.pool = pool;
  st.count = std::move(count);
  st.cfg = cfg;
  // A subscriber that quits, crashes or whose node disconnects is dropped.
  self->set_down_handler([self](caf::down_msg& msg) { forget(self, msg.source); });
  return {
      [self](subscribe_atom, const std::string& request_id, const std::string& after_event_id,
             const caf::actor& who) { return subscribe(self, request_id, after_event_id, who); },
      [self](unsub_atom, const std::string& request_id, const caf::actor& who) -> call_result {
        auto& st = self->state;
        size_t removed = 0;
        auto it = who ? st.subscribers.find(who.address()) : st.subscribers.end();
        if (it != st.subscribers.end()) {
          if (request_id.empty()) {
            removed = it->second.filters.size();
            it->second.filters.clear();
          } else {
            removed = it->second.filters.erase(request_id);
          }
          if (it->second.filters.empty())
            forget(self, who.address());
        }
        return {200, json::writer().begin_object().member("removed", removed).end_object().str()};
      },
      [self](tick_atom, uint64_t generation) {
        auto& st = self->state;
        if (generation != st.generation || !st.polling)
          return;
        if (st.subscribers.empty()) {
          // Nobody listens: stop reading; the next subscribe starts afresh.
          st.polling = false;
          return;
        }
        bool more = false;
        try {
          more = poll_once(self);
        } catch (const std::exception& e) {
          // Keep the subscribers: the next tick retries from the same cursor.
          ++st.errors;
          log::warn("event fan-out poll failed", {{"error", e.what()}});
        }
        schedule(self, more ? std::chrono::milliseconds(0) : st.cfg.poll_interval);
      },
      [self](status_atom) {
        auto& st = self->state;
        return json::writer()
            .begin_object()
            .member("subscribers", st.subscribers.size())
            .member("subscriptions", subscription_count(st))
            .member("delivered", st.delivered)
            .member("errors", st.errors)
            .member("cursor", st.polling ? st.cursor : 0)
            .end_object()
            .str();
      },
  };
}

event_fanout_actor spawn_event_fanout(caf::local_actor* parent, db::connection_pool& pool,
                                      std::shared_ptr<std::atomic<uint64_t>> subscribers,
                                      event_fanout_config cfg) {
  return parent->spawn<caf::detached + caf::linked>(event_fanout, &pool, std::move(subscribers),
                                                    cfg);
}

} // namespace mg::actors
