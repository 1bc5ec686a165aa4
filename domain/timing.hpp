#pragma once
// Every delay the workers use, as plain functions so tests can pin the numbers.
#include <optional>
#include <string_view>

namespace mg::domain {

/// Reference loop runner: MAX_CONSECUTIVE_ERRORS and MAX_BACKOFF_SECONDS.
inline constexpr int max_consecutive_errors = 5;
inline constexpr double loop_max_backoff_seconds = 60;
inline constexpr double loop_min_delay_seconds = 0.1;
/// Retry hints from executors are clamped to this (reference observer).
inline constexpr double max_retry_hint_seconds = 600;

struct loop_policy {
  double interval_seconds = 1;
  double jitter_seconds = 0;
  /// SPEC §1 drain passes: a pass that processed an item is followed at once.
  bool drain = false;
  /// The error backoff never sleeps longer than this (a worker whose
  /// passes must resume soon after an outage lowers it).
  double max_error_backoff_seconds = loop_max_backoff_seconds;
};

/// Delay before the next pass. `consecutive_errors` counts failed passes in
/// a row (0 after a success); `processed` is the item count of a successful
/// pass; `jitter_draw` is a uniform draw in [-1, 1] scaled by the jitter.
double next_loop_delay(const loop_policy& p, int consecutive_errors, int processed,
                       double jitter_draw);

/// Backoff after `consecutive_errors` failed passes (applies from 5 on):
/// min(2^n, 60) seconds (next_loop_delay caps it by the policy).
double loop_error_backoff(int consecutive_errors);

/// Observation cadence per action type (reference DEFAULT_OBSERVE_INTERVALS).
double default_observe_interval(std::string_view action_type);

/// Seconds until the next observation: the executor's retry_after_seconds
/// wins (clamped to [0, 600]); otherwise the table.
double observe_delay(std::string_view action_type, std::optional<double> retry_after_seconds);

/// Callback retry: 2^min(attempts, 6) seconds (2, 4, 8, 16, 32, 64, 64, …).
double callback_retry_delay(int attempts);

/// Sidecar restart after its n-th crash in a row: min(2^(n-1), 60) seconds.
double sidecar_restart_delay(int crashes);

/// Delay before a READY node whose preflight or prepare raised is tried
/// again, after `errors` such errors in a row (>= 1): 1 s doubling to 60 s
/// (SPEC §1 "preflight/prepare errors").
double prepare_retry_delay(int errors);

} // namespace mg::domain
