#pragma once
// Every actor interface of movegate in one place: read this file to know the
// whole message protocol. Atoms are ≤ 10 characters (CAF 0.17).
#include <caf/all.hpp>
#include <cstdint>
#include <string>

namespace mg::actors {

// --- atoms -----------------------------------------------------------------
/// Timer tick of a worker's loop, tagged with its schedule generation so a
/// superseded timer is ignored.
using tick_atom = caf::atom_constant<caf::atom("tick")>;
/// "Something for you may be ready": run a pass now instead of at the next tick.
using wake_atom = caf::atom_constant<caf::atom("wake")>;
/// A node of a request changed in a way reconcile must see.
using changed_atom = caf::atom_constant<caf::atom("changed")>;
/// Run reconcile for one request in its own transaction.
using reconcile_atom = caf::atom_constant<caf::atom("reconcile")>;
/// Ask a component for a one-line JSON status.
using status_atom = caf::atom_constant<caf::atom("status")>;
/// Ask the supervisor to stop every worker cleanly.
using shutdown_atom = caf::atom_constant<caf::atom("shutdown")>;
/// The supervisor's verdict, sent to whoever waits on the runtime:
/// (done_atom, exit_code).
using done_atom = caf::atom_constant<caf::atom("done")>;
/// Restart the sidecar at this index after its backoff.
using restart_atom = caf::atom_constant<caf::atom("restart")>;

// --- interfaces ------------------------------------------------------------

/// A supervised background worker (dispatcher, observer, recovery,
/// reconcile sweep, sidecars): a detached actor with its own connection
/// that runs one pass per tick through the shared loop runner.
using worker_actor = caf::typed_actor<
    // Loop timer; the generation tells stale timers apart.
    caf::reacts_to<tick_atom, uint64_t>,
    // Run a pass as soon as possible (coalesced).
    caf::reacts_to<wake_atom>,
    // JSON status: iterations, items, consecutive errors.
    caf::replies_to<status_atom>::with<std::string>>;

/// Detached actor with its own connection that runs reconcile
/// transactions; a small fixed pool of them serves every movement actor.
using reconciler_actor = caf::typed_actor<
    // Reconcile a request; replies whether the request needs no more work
    // from the workers (terminal or MANUAL_INTERVENTION).
    caf::replies_to<reconcile_atom, std::string>::with<bool>>;

/// One per active request: coalesces node-change messages and has the
/// request reconciled, one transaction at a time; quits when the request no
/// longer needs the workers.
using movement_actor = caf::typed_actor<
    // A node of this request changed.
    caf::reacts_to<changed_atom>, caf::replies_to<status_atom>::with<std::string>>;

/// Routes node changes to the movement actor of their request, spawning
/// it on demand and forgetting it when it quits.
using movement_registry_actor = caf::typed_actor<
    // A node of request `id` changed.
    caf::reacts_to<changed_atom, std::string>,
    // {"active_movements": n}
    caf::replies_to<status_atom>::with<std::string>>;

/// Owns the worker groups: core fail-fast, sidecar log-and-restart.
using supervisor_actor = caf::typed_actor<
    // Stop every worker; the supervisor then reports (done_atom, 0).
    caf::reacts_to<shutdown_atom>,
    // Internal: restart sidecar member `index` after its backoff.
    caf::reacts_to<restart_atom, uint32_t>,
    // Status of every worker.
    caf::replies_to<status_atom>::with<std::string>>;

} // namespace mg::actors
