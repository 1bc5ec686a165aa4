#pragma once
// What every worker pass needs, shared by the workers of one process.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/workers/suspect_peers.hpp"
#include "config/settings.hpp"
#include "domain/executor.hpp"
#include "persistence/movement_store.hpp"
#include "persistence/template_store.hpp"

namespace mg::workers {

class result_sink; // actors/workers/node_result.hpp

struct engine {
  db::plan_cache& plans;
  const domain::provider_registry& providers;
  const config::settings& settings;
  /// Where the observer and recovery hand their results; none: each pass
  /// writes its own.
  result_sink* results = nullptr;

  db::reconcile_settings reconcile_settings() const {
    return {settings.unknown_escalate_seconds, settings.callback_max_attempts};
  }
};

/// Owns what an engine refers to, so workers can share it by shared_ptr.
struct engine_context {
  config::settings settings;
  domain::provider_registry providers;
  db::plan_cache plans;
  engine e{plans, providers, settings};
  /// What e.results points at, when the runtime set one.
  std::shared_ptr<result_sink> sink;
  /// Filled by the peer watch, read by cluster_lease.
  suspect_peers suspects;

  engine_context(config::settings s, domain::provider_registry p)
      : settings(std::move(s)), providers(std::move(p)) {}
};

/// When a claim missed because another transaction holds the request, look
/// again this soon instead of after a full interval (wake-ups on only),
/// doubling while the rows stay busy (a slow provider call may hold them).
inline constexpr double busy_retry_seconds = 0.005;

/// What one pass did, for the loop runner and for the wake-ups it implies.
struct pass_result {
  int processed = 0;
  std::vector<std::string> reconcile; // requests whose actor must reconcile
  bool wake_observer = false;
  bool wake_dispatcher = false;
  int activated = 0;          // nodes this pass's own reconciles made READY
  bool wake_recovery = false; // work was handed to recovery (cluster take-over)
  int stale = 0;              // results dropped because the claim had moved on
  /// Seconds until the earliest known future item (the observer's next
  /// due node); with wake-ups on the loop sleeps no longer than this.
  std::optional<double> next_due_in_seconds;
  /// Work was there but its rows were locked by another transaction.
  bool busy = false;
  /// A standing condition that stops the worker doing its job without
  /// failing the pass (no error count, no backoff): the loop runner puts it
  /// in the heartbeat's last_error so operators see it.
  std::string standing_problem;
  /// A fatal outcome: the worker must not run another pass (e.g. this
  /// process lost its cluster lease). The loop runner ends the worker with
  /// this as its exit reason; the supervisor then reacts as to any failed
  /// member (core: the process stops with exit code 1).
  std::string fatal;
};

} // namespace mg::workers
