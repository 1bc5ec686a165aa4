#include "actors/movements.hpp"

#include <functional>

#include "config/log.hpp"
#include "config/metrics.hpp"
#include "domain/json_writer.hpp"

namespace mg::actors {

namespace {

/// Live movement actors of this process, on /metrics.
metrics::gauge& active_gauge() {
  static auto& g = metrics::registry::global().get_gauge(
      "movegate_active_movements", "Movement actors alive (requests the workers are driving).");
  return g;
}

} // namespace

namespace {

void request_reconcile(movement_actor::stateful_pointer<movement_state> self,
                       const std::string& request_id, const request_writer_actor& writer) {
  auto& st = self->state;
  st.busy = true;
  st.dirty = false;
  self->request(writer, reconcile_timeout, reconcile_atom::value, request_id)
      .then(
          [=](bool) {
            auto& st = self->state;
            st.busy = false;
            ++st.reconciles;
            // Node results reconcile in their own transactions: nothing
            // else will come for this request unless someone acts on it,
            // and then the registry starts a movement actor again.
            if (st.dirty)
              request_reconcile(self, request_id, writer);
            else
              self->quit();
          },
          [=](const caf::error&) {
            // Left flagged needs_reconcile: the sweep takes over.
            self->quit();
          });
}

} // namespace

movement_actor::behavior_type movement(movement_actor::stateful_pointer<movement_state> self,
                                       std::string request_id, request_writer_actor writer) {
  return {
      [=](changed_atom) {
        if (self->state.busy) {
          self->state.dirty = true;
          return;
        }
        request_reconcile(self, request_id, writer);
      },
      [=](status_atom) {
        json::writer w;
        w.begin_object()
            .member("request_id", request_id)
            .member("reconciles", self->state.reconciles)
            .end_object();
        return w.str();
      },
  };
}

movement_registry_actor::behavior_type
movement_registry(movement_registry_actor::stateful_pointer<registry_state> self,
                  std::vector<request_writer_actor> writers) {
  // Stop the movements with the registry: a movement's request timeout
  // keeps it referenced (and the actor system waiting) long after the
  // registry dropped it.
  self->set_exit_handler([=](const caf::exit_msg& msg) {
    for (auto& [id, m] : self->state.movements)
      self->send_exit(m, msg.reason);
    active_gauge().add(-static_cast<double>(self->state.movements.size()));
    self->state.movements.clear();
    self->quit(msg.reason);
  });
  self->set_down_handler([=](const caf::down_msg& dm) {
    auto& st = self->state;
    auto it = st.ids.find(dm.source);
    if (it == st.ids.end())
      return;
    st.movements.erase(it->second);
    st.ids.erase(it);
    active_gauge().add(-1);
  });
  return {
      [=](changed_atom, const std::string& request_id) {
        auto& st = self->state;
        auto it = st.movements.find(request_id);
        if (it == st.movements.end()) {
          // The same request always goes to the same writer (its shard), so
          // two reconciles of one request never contend for its lock.
          auto& w = writers[std::hash<std::string>{}(request_id) % writers.size()];
          // Monitored, not linked: a link would put thousands of entries on
          // the registry's own attachable list, scanned at every quit.
          auto m = self->spawn(movement, request_id, w);
          self->monitor(m);
          st.ids.emplace(m.address(), request_id);
          ++st.started;
          active_gauge().add(1);
          it = st.movements.emplace(request_id, m).first;
        }
        self->send(it->second, changed_atom::value);
      },
      [=](status_atom) {
        auto& st = self->state;
        json::writer w;
        w.begin_object()
            .member("active_movements", st.movements.size())
            .member("started_movements", st.started)
            .end_object();
        return w.str();
      },
  };
}

} // namespace mg::actors
