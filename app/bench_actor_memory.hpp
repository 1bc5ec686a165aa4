#pragma once
// What one live movement actor costs this process: resident memory grown
// by keeping `n` of them alive at once, per actor.
namespace mg::app {

struct actor_memory {
  int actors = 0;
  double bytes_per_actor = 0;
};

/// Spawns `n` movement actors through a movement registry whose reconciler
/// holds every reconcile unanswered (so each actor stays alive, waiting,
/// as one does while its request's transaction runs), measures, and stops
/// them. Needs no database.
actor_memory measure_movement_actor_memory(int n);

} // namespace mg::app
