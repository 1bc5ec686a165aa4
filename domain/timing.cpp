#include "domain/timing.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace mg::domain {

double loop_error_backoff(int consecutive_errors) {
  return std::min(std::pow(2.0, consecutive_errors), loop_max_backoff_seconds);
}

double next_loop_delay(const loop_policy& p, int consecutive_errors, int processed,
                       double jitter_draw) {
  if (consecutive_errors >= max_consecutive_errors)
    return std::min(loop_error_backoff(consecutive_errors), p.max_error_backoff_seconds);
  if (consecutive_errors == 0 && processed > 0 && p.drain)
    return 0;
  double d = p.interval_seconds + std::clamp(jitter_draw, -1.0, 1.0) * p.jitter_seconds;
  return std::max(d, loop_min_delay_seconds);
}

double default_observe_interval(std::string_view action_type) {
  static constexpr std::pair<std::string_view, double> table[] = {
      {"cex_withdrawal_status", 5},
      {"cex_deposit_status", 10},
      {"destination_chain_receive_observe", 10},
      {"destination_chain_finality_observe", 15},
      {"protocol_observe", 15},
      {"cctp_attestation", 15},
      {"cctp_mint_status", 5},
      {"ccip_delivery", 60},
      {"debridge_fulfillment", 30},
  };
  for (auto& [type, seconds] : table)
    if (type == action_type)
      return seconds;
  return 10;
}

double observe_delay(std::string_view action_type, std::optional<double> retry_after_seconds) {
  if (retry_after_seconds && std::isfinite(*retry_after_seconds))
    return std::clamp(*retry_after_seconds, 0.0, max_retry_hint_seconds);
  return default_observe_interval(action_type);
}

double callback_retry_delay(int attempts) {
  return std::pow(2.0, std::min(std::max(attempts, 0), 6));
}

double sidecar_restart_delay(int crashes) {
  return std::min(std::pow(2.0, std::max(crashes - 1, 0)), loop_max_backoff_seconds);
}

double prepare_retry_delay(int errors) {
  return std::min(std::pow(2.0, std::max(errors - 1, 0)), loop_max_backoff_seconds);
}

} // namespace mg::domain
