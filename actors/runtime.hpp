#pragma once
// Wires one process's runtime: engine, request writers, movement registry,
// and the supervised worker groups.
#include <functional>
#include <memory>
#include <vector>

#include "actors/loop_runner.hpp"
#include "actors/movements.hpp"
#include "actors/own_name.hpp"
#include "actors/protocol.hpp"
#include "actors/supervisor.hpp"
#include "config/settings.hpp"
#include "domain/executor.hpp"
#include "domain/request_change.hpp"

namespace mg::actors {

class runtime {
public:
  runtime(caf::actor_system& sys, config::settings settings, domain::provider_registry providers);
  /// Leaves the cluster when shutdown() was asked for (in-process users
  /// such as bench start a second runtime under the same name right after).
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  /// Takes this process's runtime_node (see actors/own_name.hpp): throws
  /// naming MG_RUNTIME_NODE when a live process holds it, waits out a
  /// holder it cannot prove dead; false when `wait.pause` said stop.
  bool claim_name(const name_wait& wait);

  /// Claims the name unless claim_name did (sleeping while it waits),
  /// seeds heartbeats and starts everything; (done_atom, exit_code) goes to
  /// `waiter` once the runtime has stopped. `extra` workers join their group.
  void start(caf::actor waiter, std::vector<worker_spec> extra = {});

  /// Stops every worker once its current pass ends; no pass starts after.
  void shutdown();

  /// Removes this process's cluster_nodes row (clean shutdown only); once.
  void leave_cluster();

  /// Ends without leaving the cluster (leave_cluster, the destructor too,
  /// then do nothing): whoever takes this runtime node's name or expired
  /// lease over hands the claims it still holds to recovery.
  void keep_claims_for_recovery() { joined_ = false; }

  /// A request changed outside the workers (created, approved, an operator
  /// call in this process): its movement actor reconciles, dispatchers wake.
  void notify_changed(const std::string& request_id, domain::request_change change = {});

  /// The middleman connection to peer `runtime_node` dropped: cluster_lease
  /// looks at its lease now and again as soon as it runs out (SPEC §8: the
  /// lease, not the connection, decides). peer_connected clears that.
  void peer_connection_lost(const std::string& runtime_node);
  void peer_connected(const std::string& runtime_node);

  const config::settings& settings() const { return ctx_->settings; }
  db::plan_cache& plans() { return ctx_->plans; }
  const workers::engine& engine() const { return ctx_->e; }
  movement_registry_actor registry() const { return links_->registry; }
  supervisor_actor supervisor() const { return supervisor_; }
  const std::shared_ptr<runtime_links>& links() const { return links_; }

private:
  caf::actor_system& sys_;
  std::shared_ptr<workers::engine_context> ctx_;
  std::shared_ptr<runtime_links> links_;
  supervisor_actor supervisor_;
  bool joined_ = false;
  std::vector<std::string> handed_over_requests_; // the previous holder's, to reconcile
  bool shutdown_asked_ = false;
};

/// How run_until_stopped ended.
struct stop_outcome {
  int exit_code = 0;
  /// False when a worker was still inside a pass at the drain bound: its
  /// actor never ends, so the process must exit without waiting for it.
  bool drained = true;
};

/// How long a stop waits for the workers' passes in flight (a submit
/// answers within the executor timeout; the margin covers committing its
/// result). A pass still running then is cut: its node stays SUBMITTING
/// and recovery settles it.
double drain_bound_seconds(const config::settings& s);

/// Runs the runtime until SIGINT/SIGTERM or a core failure. Signals must
/// be blocked in every thread before the actor system starts (see
/// block_shutdown_signals). `on_started` runs once the runtime has joined
/// the cluster and started its workers (a refused start throws before
/// it); `on_waiting` once if it must first wait for a holder's lease (a
/// stop signal then ends the wait with exit code 0).
stop_outcome run_until_stopped(caf::actor_system& sys, runtime& rt,
                               const std::function<void()>& on_started = {},
                               const std::function<void()>& on_waiting = {});

/// Blocks SIGINT/SIGTERM in the calling thread (and the threads it starts)
/// so run_until_stopped can wait for them with sigtimedwait.
void block_shutdown_signals();

} // namespace mg::actors
