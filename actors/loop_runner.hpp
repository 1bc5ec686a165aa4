#pragma once
// The shared loop runner (reference run_loop): one pass per tick on the
// worker's own connection; interval ± jitter (never below 0.1 s); errors
// logged and counted, backoff min(2^n, 60 s) from 5 in a row; a success
// resets the count; shutdown (an exit message) ends it. SPEC §1 adds drain
// passes and wake-ups, both off with MG_WAKEUPS_ENABLED=false; a wake-up
// never cuts the error backoff short.
#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/protocol.hpp"
#include "actors/workers/engine.hpp"
#include "domain/timing.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::actors {

enum class worker_group { core, sidecar };

inline const char* to_string(worker_group g) {
  return g == worker_group::core ? "core" : "sidecar";
}

/// The handle in runtime_links a worker fills, so others can wake it.
enum class worker_link { none, dispatcher, observer, recovery, lease };

/// Handles the workers need to wake one another. Filled by the supervisor
/// before any worker starts (workers start on their first wake message).
struct runtime_links {
  std::vector<worker_actor> dispatchers;
  worker_actor observer;
  worker_actor recovery;
  worker_actor lease; // cluster_lease: woken when a peer's connection drops
  movement_registry_actor registry;

  /// Every dispatcher runs a pass now (each claims its own node, SKIP LOCKED).
  void wake_dispatchers() const {
    for (auto& d : dispatchers)
      caf::anon_send(d, wake_atom::value);
  }

  /// Wakes one dispatcher per node made READY (at most all), idle ones
  /// first, taking turns. Waking every dispatcher for one node would make
  /// all but one race for it, miss, and pay a retry pass each; a dispatcher
  /// that got work drains on, so nothing waits for the interval.
  void wake_dispatchers_for(size_t ready_nodes) const {
    const size_t count = dispatchers.size();
    if (count == 0)
      return;
    auto n = std::min(ready_nodes, count);
    auto start = next_dispatcher.fetch_add(n, std::memory_order_relaxed);
    std::vector<bool> woken(count, false);
    auto wake = [&](size_t i) {
      woken[i] = true;
      caf::anon_send(dispatchers[i], wake_atom::value);
      --n;
    };
    for (size_t k = 0; k < count && n > 0; ++k) {
      auto i = (start + k) % count;
      if (i >= dispatcher_busy.size() || !dispatcher_busy[i]->load(std::memory_order_relaxed))
        wake(i);
    }
    for (size_t k = 0; k < count && n > 0; ++k) // all busy: they drain next
      if (!woken[(start + k) % count])
        wake((start + k) % count);
  }

  /// Per dispatcher (same order as `dispatchers`): set while it runs a pass.
  std::vector<std::shared_ptr<std::atomic<bool>>> dispatcher_busy;
  mutable std::atomic<size_t> next_dispatcher{0};
  /// Set when the runtime is asked to stop: no worker but one that
  /// outlives the drain starts another pass (nothing is claimed after
  /// SIGTERM), even one whose tick was queued before its exit message.
  std::atomic<bool> stopping{false};
};

struct worker_spec {
  std::string name;
  worker_group group = worker_group::core;
  domain::loop_policy policy;
  /// One pass on the worker's own connection.
  std::function<workers::pass_result(db::connection_slot&)> pass;
  /// When set, true while a pass runs (dispatchers: wake-ups prefer idle ones).
  std::shared_ptr<std::atomic<bool>> busy{};
  /// Runs on while the others drain their passes in flight and is stopped
  /// once they are down (the cluster lease: no peer takes this node's
  /// claims over while their submits may still answer).
  bool outlives_drain = false;
  /// How its connection plans statements: generic for the engine's hot
  /// loops (see db::plan_choice).
  db::plan_choice plans = db::plan_choice::automatic;
  worker_link link = worker_link::none;
};

struct worker_env {
  std::string database_url;
  std::string runtime_node;
  std::string network_class;
  bool wakeups = true;
  std::shared_ptr<runtime_links> links;
};

struct loop_state {
  static inline const char* name = "loop-worker";
  std::unique_ptr<db::connection_slot> conn;
  uint64_t generation = 0;
  bool immediate_pending = false;
  int consecutive_errors = 0;
  int reported_errors = 0;
  int busy_streak = 0; // passes in a row that found only locked work
  long iterations = 0;
  long items = 0;
  long unreported_iterations = 0;
  long unreported_items = 0;
  std::string last_error;
  std::chrono::steady_clock::time_point last_beat{};
};

/// Spawned detached by the supervisor; starts looping on its first wake.
worker_actor::behavior_type loop_worker(worker_actor::stateful_pointer<loop_state> self,
                                        worker_spec spec, worker_env env);

} // namespace mg::actors
