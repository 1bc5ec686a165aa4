#pragma once
// This process's memory, and what one live movement actor costs it: resident memory grown
// by keeping `n` of them alive at once, per actor.
namespace mg::app {

/// This process's resident memory, MiB: now (VmRSS) and its peak (VmHWM).
struct memory_use {
  double rss_mib = 0;
  double peak_mib = 0;
};

memory_use current_memory();

struct actor_memory {
  int actors = 0;
  double bytes_per_actor = 0;
};

/// Spawns `n` movement actors through a movement registry whose request writer
/// holds every reconcile unanswered (so each actor stays alive, waiting,
/// as one does while its request's transaction runs), measures, and stops
/// them. Needs no database.
actor_memory measure_movement_actor_memory(int n);

} // namespace mg::app
