#include "app/bench_actor_memory.hpp"

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "actors/movements.hpp"
#include "actors/system_config.hpp"

namespace mg::app {

memory_use current_memory() {
  memory_use m;
  std::ifstream status("/proc/self/status");
  std::string key;
  double kib = 0;
  std::string unit;
  while (status >> key) {
    if (key == "VmRSS:" && status >> kib >> unit)
      m.rss_mib = kib / 1024;
    else if (key == "VmHWM:" && status >> kib >> unit)
      m.peak_mib = kib / 1024;
  }
  return m;
}

namespace {

struct holding_state {
  static inline const char* name = "holding-writer";
  std::vector<caf::typed_response_promise<bool>> held;
};

/// A request writer that never answers: every movement actor stays alive.
actors::request_writer_actor::behavior_type
holding_writer(actors::request_writer_actor::stateful_pointer<holding_state> self) {
  return {
      [=](actors::reconcile_atom, const std::string&) -> caf::typed_response_promise<bool> {
        auto promise = self->make_response_promise<bool>();
        self->state.held.push_back(promise);
        return promise;
      },
      [=](actors::result_atom,
          const actors::handed_result_ptr&) -> caf::typed_response_promise<bool> {
        auto promise = self->make_response_promise<bool>();
        self->state.held.push_back(promise);
        return promise;
      },
      [](actors::flush_atom, bool) {},
      [](actors::status_atom) { return std::string("{}"); },
  };
}

/// The registry's count of live movement actors.
long active_movements(caf::scoped_actor& self, const actors::movement_registry_actor& registry) {
  long active = -1;
  self->request(registry, std::chrono::seconds(10), actors::status_atom::value)
      .receive(
          [&](const std::string& status) {
            const std::string key = "\"active_movements\":";
            auto at = status.find(key);
            if (at != std::string::npos)
              active = std::stol(status.substr(at + key.size()));
          },
          [](const caf::error&) {});
  return active;
}

} // namespace

actor_memory measure_movement_actor_memory(int n) {
  caf::actor_system_config cfg;
  actors::configure(cfg);
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  auto writer = sys.spawn(holding_writer);
  auto registry = sys.spawn(actors::movement_registry, std::vector{writer});
  // One actor first, so what every actor shares (the registry's tables,
  // CAF's scheduler state) is in the baseline.
  self->send(registry, actors::changed_atom::value, std::string("warm-up"));
  while (active_movements(self, registry) < 1)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const double before = current_memory().rss_mib;
  for (int i = 0; i < n; ++i)
    self->send(registry, actors::changed_atom::value, "movement-" + std::to_string(i));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  long active = 0;
  while ((active = active_movements(self, registry)) < n + 1 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double after = current_memory().rss_mib;
  self->send_exit(registry, caf::exit_reason::user_shutdown);
  self->send_exit(writer, caf::exit_reason::user_shutdown);
  actor_memory out;
  out.actors = static_cast<int>(active - 1);
  if (out.actors > 0)
    out.bytes_per_actor = (after - before) * 1024 * 1024 / out.actors;
  return out;
}

} // namespace mg::app
