// SPEC §1 "preflight/prepare errors" on the real database: an executor
// exception in preflight or prepare (an outage, not an answer) leaves the
// node READY with a per-node retry delay doubling from 1 s to 60 s; the
// nodes behind it dispatch in the same pass; MG_NODE_MAX_PREPARE_ERRORS in a
// row fail it with the last error; reaching SUBMITTING resets the count.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cmath>
#include <memory>
#include <string>

#include "actors/workers/node_dispatcher.hpp"
#include "persistence/db.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

/// The sim, except that preflight or prepare raise while an outage is on
/// (a provider that cannot be reached).
struct flaky_sim : domain::executor {
  explicit flaky_sim(domain::executor* sim) : sim(sim) {}
  domain::executor* sim;
  std::atomic<bool> preflight_down{false};
  std::atomic<bool> prepare_down{false};
  std::atomic<int> preflights{0};

  std::optional<domain::step_result> preflight(const domain::execution_context& ctx) override {
    ++preflights;
    if (preflight_down)
      throw domain::executor_error("connection refused (preflight)");
    return sim->preflight(ctx);
  }
  std::optional<domain::prepared_action> prepare(const domain::execution_context& ctx) override {
    if (prepare_down)
      throw domain::executor_error("connection refused (prepare)");
    return sim->prepare(ctx);
  }
  domain::step_result submit(const domain::execution_context& ctx, const domain::prepared_action& a,
                             const domain::sign_result* s) override {
    return sim->submit(ctx, a, s);
  }
  domain::step_result observe(const domain::execution_context& ctx) override {
    return sim->observe(ctx);
  }
  domain::recover_result recover(const domain::execution_context& ctx) override {
    return sim->recover(ctx);
  }
  domain::health_result health() override { return {}; }
};

struct retry_fixture : reference_db_fixture {
  std::shared_ptr<flaky_sim> flaky;
  retry_fixture() { install(); }
  void install() {
    flaky = std::make_shared<flaky_sim>(engine().providers.find_executor("sim"));
    ctx->providers.executors["flaky"] = flaky;
    add_template(R"({"template_key": "flaky", "version": 1, "nodes": [{"node_key": "a",)"
                 R"( "action_type": "chain_transfer", "executor_key": "flaky"}]})");
    add_template(one_node("solo"));
  }
  /// retry_at - updated_at of `node` (both written by the deferral).
  double retry_delay(const std::string& node) {
    return std::stod(scalar("SELECT extract(epoch FROM retry_at - updated_at)"
                            " FROM movement_request_nodes WHERE id = '" +
                            node + "'"));
  }
  /// As if the node's retry delay had passed.
  void make_due(const std::string& node) {
    exec("UPDATE movement_request_nodes SET retry_at = now() WHERE id = '" + node + "'");
  }
  long state_events(const std::string& request_id) {
    return count("SELECT count(*) FROM movement_events WHERE request_id = '" + request_id +
                 "' AND event_type = 'node_state_changed'");
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(prepare_retry)

BOOST_FIXTURE_TEST_CASE(preflight_error_leaves_the_node_ready_with_a_doubling_delay,
                        retry_fixture) {
  auto id = create_and_approve("flaky");
  auto n = node_id(*this, id);
  flaky->preflight_down = true;
  const long events_before = state_events(id);
  const double expected[] = {1, 2, 4, 8, 16, 32, 60, 60};
  for (int i = 0; i < 8; ++i) {
    auto r = workers::dispatch_pass(conn, engine());
    BOOST_TEST(r.processed == 1);
    BOOST_TEST(node_col(*this, n, "node_state") == "READY");
    BOOST_TEST(node_col(*this, n, "prepare_errors") == std::to_string(i + 1));
    BOOST_TEST(node_col(*this, n, "error_code") == "PREFLIGHT_ERROR");
    BOOST_TEST(snapshot(id).request_state ==
               domain::request_state::executing); // its first dispatch was tried
    BOOST_TEST(std::abs(retry_delay(n) - expected[i]) < 0.05, "error " << i + 1);
    // Waiting out its delay: no pass takes it (no spin), nothing is written.
    BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 0);
    make_due(n);
  }
  BOOST_TEST(flaky->preflights.load() == 8);
  BOOST_TEST(state_events(id) == events_before); // READY all along: no event per try
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger") == 0);
  BOOST_TEST(request_col(*this, id, "dispatch_paused") == "f");
}

BOOST_FIXTURE_TEST_CASE(a_ready_node_behind_a_failing_one_dispatches_in_the_same_pass,
                        retry_fixture) {
  auto first = create_and_approve("flaky");
  auto second = create_and_approve("solo");
  flaky->preflight_down = true;
  auto r = workers::dispatch_pass(conn, engine());
  BOOST_TEST(r.processed == 1);
  BOOST_TEST(node_state(first, "a") == "READY");
  BOOST_TEST(node_state(second, "a") == "SUBMITTED"); // same pass
  BOOST_TEST(!r.busy); // a deferred node is not a locked one: no busy retry
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 0);
}

BOOST_FIXTURE_TEST_CASE(the_tenth_error_in_a_row_fails_the_node_with_the_last_error,
                        retry_fixture) {
  BOOST_REQUIRE(settings.node_max_prepare_errors == 10); // the default
  auto id = create_and_approve("flaky");
  auto n = node_id(*this, id);
  flaky->preflight_down = true;
  for (int i = 1; i <= 9; ++i) {
    if (i == 9) { // the last one comes from prepare
      flaky->preflight_down = false;
      flaky->prepare_down = true;
    }
    BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
    BOOST_TEST(node_col(*this, n, "node_state") == "READY", "error " << i);
    make_due(n);
  }
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "FAILED");
  BOOST_TEST(node_col(*this, n, "error_code") == "PREPARE_ERROR");
  BOOST_TEST(node_col(*this, n, "error_detail") == "connection refused (prepare)");
  BOOST_TEST(node_col(*this, n, "attempt_no") == "0");
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger") == 0);
  reconcile(id);
  BOOST_TEST(snapshot(id).request_state == domain::request_state::failed);
}

BOOST_FIXTURE_TEST_CASE(the_limit_is_a_setting, retry_fixture) {
  settings.node_max_prepare_errors = 2;
  apply_settings();
  install();
  auto n = node_id(*this, create_and_approve("flaky"));
  flaky->prepare_down = true;
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "READY");
  make_due(n);
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "FAILED");
  BOOST_TEST(node_col(*this, n, "error_code") == "PREPARE_ERROR");
}

BOOST_FIXTURE_TEST_CASE(reaching_submitting_resets_the_count, retry_fixture) {
  auto id = create_and_approve("flaky");
  auto n = node_id(*this, id);
  flaky->prepare_down = true;
  for (int i = 0; i < 3; ++i) {
    BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
    make_due(n);
  }
  BOOST_REQUIRE(node_col(*this, n, "prepare_errors") == "3");
  flaky->prepare_down = false; // the provider is back
  BOOST_TEST(workers::dispatch_pass(conn, engine()).processed == 1);
  BOOST_TEST(node_col(*this, n, "node_state") == "SUBMITTED");
  BOOST_TEST(node_col(*this, n, "prepare_errors") == "0");
  BOOST_TEST(node_col(*this, n, "retry_at") == "");
  BOOST_TEST(node_col(*this, n, "error_code") == "");
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE node_id = '" + n + "'") == 1);
}

BOOST_AUTO_TEST_SUITE_END()
