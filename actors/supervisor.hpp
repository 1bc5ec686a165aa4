#pragma once
// Supervision (reference "Supervision semantics" + SPEC §1): the core group
// fails fast — an abnormal exit of any core member stops everything cleanly
// and the runtime reports exit code 1 — while a crashed sidecar is logged
// and restarted with bounded backoff, touching nothing else.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "actors/loop_runner.hpp"
#include "actors/protocol.hpp"

namespace mg::actors {

/// A member the supervisor did not spawn from a spec (registry,
/// request writers): always core, never restarted.
struct fixed_member {
  std::string name;
  caf::actor handle;
};

struct supervisor_member {
  std::string name;
  worker_group group = worker_group::core;
  int spec_index = -1; // -1: fixed member
  caf::actor handle;
  int crashes = 0;
  bool running = false;
};

/// How the supervisor starts a member from its spec and pages a core
/// failure. The defaults do the real work: a detached loop worker on its
/// own connection, and a notification row written by a detached actor (the
/// supervisor runs on CAF's shared threads and does no I/O itself). Tests
/// pass scripted ones to run the supervisor on CAF's deterministic
/// scheduler.
struct supervisor_hooks {
  std::function<worker_actor(caf::actor_system&, const worker_spec&, const worker_env&)>
      spawn_worker;
  /// Returns the actor doing the paging; the verdict waits until it is down.
  std::function<caf::actor(caf::actor_system&, const worker_env&, const std::string& worker,
                           const std::string& why)>
      report_core_failure;
};

supervisor_hooks default_supervisor_hooks();

struct supervisor_state {
  static inline const char* name = "supervisor";
  std::vector<worker_spec> specs;
  std::vector<supervisor_member> members;
  worker_env env;
  supervisor_hooks hooks;
  caf::actor waiter;
  /// Detached actors still writing a core_group_failure notification: the
  /// verdict waits for them, the supervisor's own thread never does I/O.
  std::vector<caf::actor_addr> reporters;
  bool stopping = false;
  int exit_code = 0;
};

/// Spawns every spec through `hooks`, fills env.links, then wakes each worker so
/// they start. Reports (done_atom, exit_code) to `waiter` once every member
/// has stopped.
supervisor_actor::behavior_type
supervisor(supervisor_actor::stateful_pointer<supervisor_state> self,
           std::vector<worker_spec> specs, worker_env env, std::vector<fixed_member> fixed,
           caf::actor waiter, supervisor_hooks hooks);

} // namespace mg::actors
