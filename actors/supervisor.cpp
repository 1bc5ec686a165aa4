#include "actors/supervisor.hpp"

#include <algorithm>

#include "config/log.hpp"
#include "domain/json.hpp"
#include "domain/json_writer.hpp"
#include "domain/timing.hpp"
#include "persistence/notification_outbox_store.hpp"

namespace mg::actors {

namespace {

using self_ptr = supervisor_actor::stateful_pointer<supervisor_state>;

worker_actor spawn_worker(self_ptr self, const worker_spec& spec) {
  auto h = self->state.hooks.spawn_worker(self->system(), spec, self->state.env);
  self->monitor(h);
  return h;
}

void register_link(supervisor_state& st, const worker_spec& spec, const worker_actor& h) {
  auto& links = *st.env.links;
  switch (spec.link) {
  case worker_link::dispatcher:
    links.dispatchers.push_back(h);
    links.dispatcher_busy.push_back(spec.busy ? spec.busy
                                              : std::make_shared<std::atomic<bool>>(false));
    break;
  case worker_link::observer:
    links.observer = h;
    break;
  case worker_link::recovery:
    links.recovery = h;
    break;
  case worker_link::lease:
    links.lease = h;
    break;
  case worker_link::none:
    break;
  }
}

/// Fixed members (the request writers and the registry) outlive the drain
/// too: a pass in flight may still hand them node results to write.
bool outlives_drain(const supervisor_state& st, const supervisor_member& m) {
  return m.spec_index < 0 || st.specs[m.spec_index].outlives_drain;
}

/// Once every other member is down, the ones that outlive the drain stop.
void stop_survivors_when_alone(self_ptr self) {
  auto& st = self->state;
  for (auto& m : st.members)
    if (m.running && !outlives_drain(st, m))
      return;
  for (auto& m : st.members)
    if (m.running)
      self->send_exit(m.handle, caf::exit_reason::user_shutdown);
}

/// Each member ends its pass in flight and stops; those that outlive the
/// drain (the lease) keep running until the others are down.
void stop_all(self_ptr self) {
  auto& st = self->state;
  st.stopping = true;
  for (auto& m : st.members)
    if (m.running && !outlives_drain(st, m))
      self->send_exit(m.handle, caf::exit_reason::user_shutdown);
  stop_survivors_when_alone(self);
}

void report_if_done(self_ptr self) {
  auto& st = self->state;
  if (!st.reporters.empty())
    return;
  for (auto& m : st.members)
    if (m.running)
      return;
  log::info("runtime stopped", {{"exit_code", st.exit_code}});
  caf::anon_send(st.waiter, done_atom::value, st.exit_code);
  self->quit();
}

/// The verdict waits for the page: it is enqueued before exit 1.
void report_core_failure(self_ptr self, const std::string& worker, const std::string& why) {
  auto h = self->state.hooks.report_core_failure(self->system(), self->state.env, worker, why);
  self->monitor(h);
  self->state.reporters.push_back(h.address());
}

void on_member_down(self_ptr self, supervisor_member& m, const caf::error& reason) {
  auto& st = self->state;
  m.running = false;
  if (st.stopping) {
    stop_survivors_when_alone(self);
    report_if_done(self);
    return;
  }
  auto why = self->system().render(reason);
  if (m.group == worker_group::core) {
    log::error("core worker exited; stopping the runtime (fail-fast)",
               {{"worker", m.name}, {"reason", why}});
    st.exit_code = 1;
    report_core_failure(self, m.name, why);
    stop_all(self);
    report_if_done(self);
    return;
  }
  ++m.crashes;
  auto delay = domain::sidecar_restart_delay(m.crashes);
  log::error(
      "sidecar worker crashed; restarting after backoff",
      {{"worker", m.name}, {"reason", why}, {"crashes", m.crashes}, {"restart_in_s", delay}});
  auto index = static_cast<uint32_t>(&m - st.members.data());
  self->delayed_send(self, std::chrono::milliseconds(static_cast<long>(delay * 1000)),
                     restart_atom::value, index);
}

} // namespace

supervisor_hooks default_supervisor_hooks() {
  return {
      [](caf::actor_system& sys, const worker_spec& spec, const worker_env& env) {
        return sys.spawn<caf::detached>(loop_worker, spec, env);
      },
      // The notification's connect and insert run off CAF's shared threads.
      [](caf::actor_system& sys, const worker_env& env, const std::string& worker,
         const std::string& why) {
        return caf::actor_cast<caf::actor>(sys.spawn<caf::detached>(
            [url = env.database_url, node = env.runtime_node, net = env.network_class, worker,
             why] { db::enqueue_core_group_failure(url, node, net, worker, why); }));
      },
  };
}

supervisor_actor::behavior_type supervisor(self_ptr self, std::vector<worker_spec> specs,
                                           worker_env env, std::vector<fixed_member> fixed,
                                           caf::actor waiter, supervisor_hooks hooks) {
  auto& st = self->state;
  st.specs = std::move(specs);
  st.env = std::move(env);
  st.hooks = std::move(hooks);
  st.waiter = std::move(waiter);
  for (auto& f : fixed) {
    self->monitor(f.handle);
    st.members.push_back({f.name, worker_group::core, -1, f.handle, 0, true});
  }
  for (size_t i = 0; i < st.specs.size(); ++i) {
    auto h = spawn_worker(self, st.specs[i]);
    register_link(st, st.specs[i], h);
    st.members.push_back({st.specs[i].name, st.specs[i].group, static_cast<int>(i),
                          caf::actor_cast<caf::actor>(h), 0, true});
  }
  // Links are complete: let the workers start.
  for (auto& m : st.members)
    if (m.spec_index >= 0)
      self->send(caf::actor_cast<worker_actor>(m.handle), wake_atom::value);
  log::info("runtime started", {{"workers", static_cast<int>(st.specs.size())},
                                {"network_class", st.env.network_class},
                                {"wakeups", st.env.wakeups}});
  self->set_down_handler([=](const caf::down_msg& dm) {
    auto& reporters = self->state.reporters;
    auto r = std::find(reporters.begin(), reporters.end(), dm.source);
    if (r != reporters.end()) {
      reporters.erase(r);
      report_if_done(self);
      return;
    }
    for (auto& m : self->state.members)
      if (m.running && m.handle.address() == dm.source) {
        on_member_down(self, m, dm.reason);
        return;
      }
  });
  return {
      [=](shutdown_atom) {
        log::info("shutdown requested");
        stop_all(self);
        report_if_done(self);
      },
      [=](restart_atom, uint32_t index) {
        auto& st = self->state;
        if (st.stopping || index >= st.members.size())
          return;
        auto& m = st.members[index];
        auto h = spawn_worker(self, st.specs[m.spec_index]);
        m.handle = caf::actor_cast<caf::actor>(h);
        m.running = true;
        self->send(h, wake_atom::value);
        log::info("sidecar worker restarted", {{"worker", m.name}, {"crashes", m.crashes}});
      },
      [=](status_atom) {
        json::writer w;
        w.begin_array();
        for (auto& m : self->state.members)
          w.begin_object()
              .member("name", m.name)
              .member("group", to_string(m.group))
              .member("running", m.running)
              .member("crashes", m.crashes)
              .end_object();
        return w.end_array().str();
      },
  };
}

} // namespace mg::actors
