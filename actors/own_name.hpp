#pragma once
// Start-up under MG_RUNTIME_NODE (SPEC §8 "Restart under its own name"): a
// supervisor that restarts a crashed process within the lease must just
// work, a second live process under the name must not start, and a holder
// this process cannot see (another host or container) is waited out.
#include <functional>
#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "config/settings.hpp"
#include "domain/process_identity.hpp"
#include "persistence/cluster_store.hpp"

namespace mg::actors {

/// Where this process's row says its cluster door is.
struct name_place {
  std::string host;
  int cluster_port = 0;
};

/// One attempt at the name.
struct name_attempt {
  bool joined = false;
  /// The previous holder's claims, handed to recovery (an expired lease or
  /// a provably dead holder); nullopt when the name was free.
  std::optional<db::takeover> handed_over;
  std::string reason;                 // why the name was taken over, or why to wait
  double lease_remaining_seconds = 0; // when waiting
};

/// One transaction: registers the name for `me`, or takes it from an
/// expired lease or a provably dead holder (its claimed work goes to
/// recovery with new claim tokens), or answers "wait" (not joined). Throws
/// std::runtime_error naming the node and MG_RUNTIME_NODE when a live
/// process holds it.
name_attempt try_claim_name(pqxx::connection& conn, const std::string& runtime_node,
                            const name_place& place, double lease_seconds,
                            int callback_max_attempts, const domain::process_identity& me);

struct name_wait {
  /// Runs once, when the first attempt says wait (serve opens its admin
  /// listener so /readyz answers 503 meanwhile).
  std::function<void()> on_first_wait;
  /// Sleeps up to `seconds`; false when the process was asked to stop.
  std::function<bool(double seconds)> pause;
};

/// Attempts until the name is this process's, logging every few seconds
/// while it waits; nullopt when `wait.pause` said stop. Throws as
/// try_claim_name does.
std::optional<name_attempt> claim_runtime_node(const config::settings& s, const name_wait& wait);

} // namespace mg::actors
