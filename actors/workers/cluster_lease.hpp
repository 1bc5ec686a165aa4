#pragma once
// cluster_lease pass (SPEC §8): renews this process's database lease and
// takes over the claimed work of processes whose lease expired, waking
// node_recovery at once when it took some. Peers whose connection dropped
// (suspects) are looked at again the moment their lease runs out instead of
// at the next interval.
#include <chrono>
#include <optional>
#include <string>

#include "actors/workers/engine.hpp"
#include "actors/workers/suspect_peers.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

/// Since when this process has renewed its lease without interruption. A
/// peer's expired lease proves it dead only if the database was there for
/// it to renew all that time: after an outage every process's lease looks
/// expired, and the one that reconnects first must not take over the
/// others before they had the chance to renew. So once this process's own
/// renewals were interrupted (a pass failed on the way to or through the
/// database, or a renewal came a full lease after the previous one), it
/// declares no peer dead until it has renewed for a full lease again. A
/// process that just started has seen no interruption.
class lease_continuity {
public:
  using clock = std::chrono::steady_clock;

  /// The pass failed before its renewal committed, or lost its connection.
  void interrupted() { interrupted_ = true; }

  /// A renewal committed at `now`; true when it starts a new run of
  /// renewals (the previous run was interrupted).
  bool renewed(clock::time_point now, double lease_seconds) {
    bool lapsed = last_renewed_ && seconds(now - *last_renewed_) >= lease_seconds;
    last_renewed_ = now;
    if (!interrupted_ && !lapsed)
      return false;
    interrupted_ = false;
    renewing_since_ = now;
    return true;
  }

  /// Seconds until take-overs are allowed again; nullopt when they are.
  std::optional<double> takeovers_wait_seconds(clock::time_point now, double lease_seconds) const {
    if (!renewing_since_)
      return std::nullopt;
    double left = lease_seconds - seconds(now - *renewing_since_);
    return left > 0 ? std::optional<double>(left) : std::nullopt;
  }

private:
  static double seconds(clock::duration d) { return std::chrono::duration<double>(d).count(); }

  bool interrupted_ = false;
  std::optional<clock::time_point> last_renewed_;
  std::optional<clock::time_point> renewing_since_;
};

/// When this process's lease row is gone (a survivor declared it dead and
/// took its work) the pass reports it as `fatal`: the worker ends, and as a
/// core worker it stops the process with exit code 1 instead of working on
/// claims that are no longer its own. `continuity` lives as long as the
/// worker (one per process).
pass_result cluster_lease_pass(db::connection_slot& conn, const engine& e, suspect_peers& suspects,
                               lease_continuity& continuity);

} // namespace mg::workers
