#include "actors/movements.hpp"

#include <functional>

#include "actors/workers/node_result.hpp"
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

using movement_ptr = movement_actor::stateful_pointer<movement_state>;

/// Nothing is pending: the request needs no actor until someone acts on
/// it, and then the registry starts one again.
void quit_if_idle(movement_ptr self) {
  auto& st = self->state;
  if (!st.busy && !st.dirty && st.results_in_flight == 0)
    self->quit();
}

void request_reconcile(movement_ptr self, const std::string& request_id,
                       const request_writer_actor& writer) {
  auto& st = self->state;
  st.busy = true;
  st.dirty = false;
  self->request(writer, reconcile_timeout, reconcile_atom::value, request_id)
      .then(
          [=](bool) {
            auto& st = self->state;
            st.busy = false;
            ++st.reconciles;
            if (st.dirty)
              request_reconcile(self, request_id, writer);
            else
              quit_if_idle(self);
          },
          [=](const caf::error&) {
            // Left flagged needs_reconcile: the sweep takes over.
            auto& st = self->state;
            st.busy = false;
            st.dirty = false;
            quit_if_idle(self);
          });
}

/// The writer re-checks and writes the result with its request's
/// reconcile; its answer goes back to whoever handed the result over.
caf::typed_response_promise<bool> hand_result(movement_ptr self, const handed_result_ptr& result,
                                              const request_writer_actor& writer) {
  auto reply = self->make_response_promise<bool>();
  ++self->state.results_in_flight;
  auto settle = [=] {
    --self->state.results_in_flight;
    quit_if_idle(self);
  };
  self->request(writer, result_timeout, result_atom::value, result)
      .then(
          [=](bool written) mutable {
            ++self->state.results;
            reply.deliver(written);
            settle();
          },
          [=](caf::error& err) mutable {
            reply.deliver(std::move(err));
            settle();
          });
  return reply;
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
      [=](result_atom, const handed_result_ptr& result) {
        return hand_result(self, result, writer);
      },
      [=](status_atom) {
        json::writer w;
        w.begin_object()
            .member("request_id", request_id)
            .member("reconciles", self->state.reconciles)
            .member("results", self->state.results)
            .end_object();
        return w.str();
      },
  };
}

namespace {

/// The movement actor of `request_id`, started on demand.
movement_actor movement_of(movement_registry_actor::stateful_pointer<registry_state> self,
                           const std::vector<request_writer_actor>& writers,
                           const std::string& request_id) {
  auto& st = self->state;
  auto it = st.movements.find(request_id);
  if (it != st.movements.end())
    return it->second;
  // The same request always goes to the same writer (its shard), so two
  // writes of one request never contend for its lock.
  auto& w = writers[std::hash<std::string>{}(request_id) % writers.size()];
  // Monitored, not linked: a link would put thousands of entries on the
  // registry's own attachable list, scanned at every quit.
  auto m = self->spawn(movement, request_id, w);
  self->monitor(m);
  st.ids.emplace(m.address(), request_id);
  ++st.started;
  active_gauge().add(1);
  st.movements.emplace(request_id, m);
  return m;
}

} // namespace

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
        self->send(movement_of(self, writers, request_id), changed_atom::value);
      },
      [=](result_atom, const handed_result_ptr& result) -> caf::delegated<bool> {
        auto& request_id = result->node.request_id;
        return self->delegate(movement_of(self, writers, request_id), result_atom::value, result);
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

std::vector<std::optional<bool>>
registry_sink::hand_over(const std::vector<std::shared_ptr<workers::handed_result>>& results) {
  caf::scoped_actor self{sys_};
  // Everything handed over before the first wait, so one flush can take it.
  using handle =
      decltype(self->request(registry_, result_timeout, result_atom::value, handed_result_ptr{}));
  std::vector<handle> asked;
  for (auto& r : results)
    asked.push_back(self->request(registry_, result_timeout, result_atom::value, r));
  std::vector<std::optional<bool>> out;
  for (auto& h : asked)
    h.receive([&](bool written) { out.emplace_back(written); },
              [&](const caf::error& err) {
                log::warn("node result not written", {{"error", sys_.render(err)}});
                out.emplace_back(std::nullopt);
              });
  return out;
}

} // namespace mg::actors
