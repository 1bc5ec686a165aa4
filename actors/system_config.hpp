#pragma once
// The actor system configuration every movegate process uses.
#include <caf/all.hpp>

namespace mg::actors {

/// Sharing scheduler: CAF's default work-stealing scheduler polls
/// aggressively when idle, which on a 2-core box takes CPU from
/// PostgreSQL. Our workers are detached (own threads) anyway; the
/// scheduled actors (registry, movements) do little work each.
inline void configure(caf::actor_system_config& cfg) {
  cfg.set("scheduler.policy", caf::atom("sharing"));
}

} // namespace mg::actors
