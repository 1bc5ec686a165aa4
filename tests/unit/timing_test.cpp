// Worker delays (runtime-workers reference: loop_runner, observation
// intervals, callback retry backoff; SPEC §1 drain passes and sidecar restart).
#include "domain/timing.hpp"

#include <boost/test/tools/floating_point_comparison.hpp>
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>

using namespace mg::domain;
namespace tt = boost::test_tools;

namespace {

loop_policy policy(double interval, double jitter = 0, bool drain = false) {
  loop_policy p;
  p.interval_seconds = interval;
  p.jitter_seconds = jitter;
  p.drain = drain;
  return p;
}

} // namespace

BOOST_AUTO_TEST_SUITE(timing)

BOOST_AUTO_TEST_CASE(constants_match_reference) {
  BOOST_TEST(max_consecutive_errors == 5);
  BOOST_TEST(loop_max_backoff_seconds == 60.0);
  BOOST_TEST(loop_min_delay_seconds == 0.1);
  BOOST_TEST(max_retry_hint_seconds == 600.0);
}

BOOST_AUTO_TEST_CASE(interval_used_after_success) {
  BOOST_TEST(next_loop_delay(policy(5), 0, 0, 0) == 5.0);
  BOOST_TEST(next_loop_delay(policy(5), 0, 3, 0) == 5.0); // no drain: interval even when busy
  BOOST_TEST(next_loop_delay(policy(1), 0, 0, 0) == 1.0);
  BOOST_TEST(next_loop_delay(policy(30, 0, true), 0, 0, 0) == 30.0); // drain, empty pass
}

BOOST_AUTO_TEST_CASE(jitter_bounds) {
  auto p = policy(5, 2);
  BOOST_TEST(next_loop_delay(p, 0, 0, -1) == 3.0, tt::tolerance(1e-9));
  BOOST_TEST(next_loop_delay(p, 0, 0, 1) == 7.0, tt::tolerance(1e-9));
  BOOST_TEST(next_loop_delay(p, 0, 0, 0) == 5.0, tt::tolerance(1e-9));
  BOOST_TEST(next_loop_delay(p, 0, 0, 0.5) == 6.0, tt::tolerance(1e-9));
  BOOST_TEST(next_loop_delay(p, 0, 0, -0.25) == 4.5, tt::tolerance(1e-9));
  // Draws outside [-1, 1] never exceed the jitter.
  BOOST_TEST(next_loop_delay(p, 0, 0, 3) == 7.0, tt::tolerance(1e-9));
  BOOST_TEST(next_loop_delay(p, 0, 0, -3) == 3.0, tt::tolerance(1e-9));
  for (double draw = -1; draw <= 1; draw += 0.125) {
    double d = next_loop_delay(p, 0, 0, draw);
    BOOST_TEST_CONTEXT("draw " << draw) {
      BOOST_TEST(d >= 3.0 - 1e-9);
      BOOST_TEST(d <= 7.0 + 1e-9);
    }
  }
  // Jitter also applies on errors below the backoff threshold.
  BOOST_TEST(next_loop_delay(p, 2, 0, 1) == 7.0, tt::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(never_below_minimum_delay) {
  BOOST_TEST(next_loop_delay(policy(0), 0, 0, 0) == 0.1, tt::tolerance(1e-12));
  BOOST_TEST(next_loop_delay(policy(0.05), 0, 0, 0) == 0.1, tt::tolerance(1e-12));
  BOOST_TEST(next_loop_delay(policy(1, 5), 0, 0, -1) == 0.1, tt::tolerance(1e-12));
  BOOST_TEST(next_loop_delay(policy(0.5, 0.45), 0, 0, -1) == 0.1, tt::tolerance(1e-9));
  BOOST_TEST(next_loop_delay(policy(0.5, 0.3), 0, 0, -1) == 0.2, tt::tolerance(1e-9));
  BOOST_TEST(next_loop_delay(policy(0, 0, true), 2, 0, -1) == 0.1, tt::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(drain_only_after_successful_pass_that_processed_items) {
  auto drain = policy(5, 1, true);
  BOOST_TEST(next_loop_delay(drain, 0, 1, 0) == 0.0);
  BOOST_TEST(next_loop_delay(drain, 0, 50, 1) == 0.0);
  BOOST_TEST(next_loop_delay(drain, 0, 50, -1) == 0.0); // not clamped to the minimum
  // Empty pass: the interval.
  BOOST_TEST(next_loop_delay(drain, 0, 0, 0) == 5.0);
  // Drain disabled (MG_WAKEUPS_ENABLED=false): the reference timing.
  BOOST_TEST(next_loop_delay(policy(5, 1, false), 0, 10, 0) == 5.0);
  // After an error there is no drain.
  BOOST_TEST(next_loop_delay(drain, 1, 10, 0) == 5.0);
  BOOST_TEST(next_loop_delay(drain, 4, 10, 0) == 5.0);
  BOOST_TEST(next_loop_delay(drain, 5, 10, 0) == 32.0);
}

BOOST_AUTO_TEST_CASE(errors_below_threshold_use_plain_interval) {
  for (int errors = 1; errors <= 4; ++errors)
    BOOST_TEST_CONTEXT("errors " << errors) {
      BOOST_TEST(next_loop_delay(policy(7), errors, 0, 0) == 7.0);
      BOOST_TEST(next_loop_delay(policy(0.5), errors, 0, 0) == 0.5);
    }
}

BOOST_AUTO_TEST_CASE(errors_from_threshold_back_off_exponentially) {
  struct row {
    int errors;
    double delay;
  };
  const row rows[] = {{5, 32}, {6, 60}, {7, 60}, {10, 60}, {100, 60}};
  for (auto& r : rows)
    BOOST_TEST_CONTEXT("errors " << r.errors) {
      BOOST_TEST(next_loop_delay(policy(1), r.errors, 0, 0) == r.delay);
      // Neither the interval, the jitter nor drain changes the backoff.
      BOOST_TEST(next_loop_delay(policy(300, 10, true), r.errors, 3, 1) == r.delay);
      BOOST_TEST(next_loop_delay(policy(0.2, 5), r.errors, 0, -1) == r.delay);
    }
}

BOOST_AUTO_TEST_CASE(a_policy_caps_the_error_backoff) {
  auto p = policy(2);
  p.max_error_backoff_seconds = 2;                // the cluster lease worker: its renew interval
  BOOST_TEST(next_loop_delay(p, 4, 0, 0) == 2.0); // below the threshold: the interval
  BOOST_TEST(next_loop_delay(p, 5, 0, 0) == 2.0);
  BOOST_TEST(next_loop_delay(p, 50, 0, 0) == 2.0);
  p.max_error_backoff_seconds = 40;
  BOOST_TEST(next_loop_delay(p, 5, 0, 0) == 32.0); // the cap only ever shortens it
  BOOST_TEST(next_loop_delay(p, 6, 0, 0) == 40.0);
}

BOOST_AUTO_TEST_CASE(loop_error_backoff_values) {
  struct row {
    int errors;
    double delay;
  };
  const row rows[] = {{0, 1},  {1, 2},  {2, 4},  {3, 8},   {4, 16},
                      {5, 32}, {6, 60}, {7, 60}, {10, 60}, {64, 60}};
  for (auto& r : rows)
    BOOST_TEST_CONTEXT("errors " << r.errors) {
      BOOST_TEST(loop_error_backoff(r.errors) == r.delay);
    }
}

BOOST_AUTO_TEST_CASE(default_observe_intervals_table) {
  const std::pair<std::string, double> rows[] = {
      {"cex_withdrawal_status", 5},
      {"cex_deposit_status", 10},
      {"destination_chain_receive_observe", 10},
      {"destination_chain_finality_observe", 15},
      {"protocol_observe", 15},
      {"cctp_attestation", 15},
      {"cctp_mint_status", 5},
      {"ccip_delivery", 60},
      {"debridge_fulfillment", 30},
      // (other)
      {"cex_withdrawal", 10},
      {"noop", 10},
      {"", 10},
      {"CCIP_DELIVERY", 10},
      {"ccip_delivery_x", 10},
  };
  for (auto& [type, seconds] : rows)
    BOOST_TEST_CONTEXT("action_type '" << type << "'") {
      BOOST_TEST(default_observe_interval(type) == seconds);
      BOOST_TEST(observe_delay(type, std::nullopt) == seconds);
    }
}

BOOST_AUTO_TEST_CASE(observe_delay_hint_precedence) {
  struct row {
    std::string type;
    std::optional<double> hint;
    double delay;
  };
  const row rows[] = {
      {"ccip_delivery", 0.0, 0},
      {"ccip_delivery", 7.0, 7},
      {"cex_withdrawal_status", 7.0, 7},
      {"noop", 2.5, 2.5},
      {"ccip_delivery", 600.0, 600},
      {"ccip_delivery", 10000.0, 600},
      {"noop", 600.5, 600},
      {"ccip_delivery", -1.0, 0},
      {"noop", -3600.0, 0},
      {"ccip_delivery", std::nullopt, 60},
      {"debridge_fulfillment", std::nullopt, 30},
      {"noop", std::nullopt, 10},
  };
  for (auto& r : rows)
    BOOST_TEST_CONTEXT(r.type << " hint " << (r.hint ? std::to_string(*r.hint) : "none")) {
      BOOST_TEST(observe_delay(r.type, r.hint) == r.delay);
    }
  // A non-finite hint is no hint.
  BOOST_TEST(observe_delay("ccip_delivery", std::numeric_limits<double>::quiet_NaN()) == 60.0);
  double d = observe_delay("ccip_delivery", std::numeric_limits<double>::infinity());
  BOOST_TEST(std::isfinite(d));
  BOOST_TEST(d <= 600.0);
}

BOOST_AUTO_TEST_CASE(callback_retry_delay_values) {
  const double expected[] = {2, 4, 8, 16, 32, 64, 64, 64};
  for (int attempts = 1; attempts <= 8; ++attempts)
    BOOST_TEST_CONTEXT("attempts " << attempts) {
      BOOST_TEST(callback_retry_delay(attempts) == expected[attempts - 1]);
    }
  BOOST_TEST(callback_retry_delay(100) == 64.0);
}

BOOST_AUTO_TEST_CASE(sidecar_restart_delay_values) {
  struct row {
    int crashes;
    double delay;
  };
  const row rows[] = {{1, 1}, {2, 2}, {3, 4}, {4, 8}, {5, 16}, {6, 32}, {7, 60}, {8, 60}, {50, 60}};
  for (auto& r : rows)
    BOOST_TEST_CONTEXT("crashes " << r.crashes) {
      BOOST_TEST(sidecar_restart_delay(r.crashes) == r.delay);
    }
}

BOOST_AUTO_TEST_SUITE_END()
