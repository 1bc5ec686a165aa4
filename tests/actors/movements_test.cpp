// Movement actors live only while their request needs the workers: a
// request that waits for approval, was rejected, cancelled, expired or has
// completed leaves the registry's active_movements back at its baseline, and
// a change its own transaction reconciled starts none.
#include <boost/test/unit_test.hpp>

#include "domain/json.hpp"
#include "persistence/connection_pool.hpp"
#include "services/movement_service.hpp"
#include "tests/support/db_helpers.hpp"
#include "tests/support/registry_counts.hpp"
#include "tests/support/runtime_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

const api::caller alice{"alice", {api::scope::create, api::scope::read}};
const api::caller bob{"bob", {api::scope::approve, api::scope::read}};

using mg::test::registry_counts;

struct movements_fixture : test::runtime_fixture {
  std::unique_ptr<db::connection_pool> pool;
  std::unique_ptr<services::service_context> sctx;
  std::unique_ptr<services::movement_service> svc;
  json::document empty;

  movements_fixture() {
    empty.SetObject();
    add_template(test::one_node("solo"));
  }

  /// Starts the runtime and the API service in front of it, announcing
  /// every change to the runtime as the HTTP front door does.
  void start_with_api() {
    start();
    pool = std::make_unique<db::connection_pool>(url, 2);
    sctx.reset(
        new services::service_context{*pool, settings, rt->plans(),
                                      [this](const std::string& id, domain::request_change change) {
                                        rt->notify_changed(id, change);
                                      },
                                      &rt->engine().providers});
    svc = std::make_unique<services::movement_service>(*sctx);
  }

  registry_counts counts() {
    registry_counts c;
    (*self)
        ->request(rt->registry(), 5s, actors::status_atom::value)
        .receive([&](const std::string& s) { c = mg::test::parse_registry_counts(s); },
                 [&](caf::error&) {});
    return c;
  }

  std::string create() {
    static int n = 0;
    auto r = svc->create(
        alice, json::parse_trusted(R"({"template_key": "solo", "intent": {"asset": "USDC",)"
                                   R"( "amount": "10"}, "idempotency_key": "m-)" +
                                       std::to_string(++n) + R"("})",
                                   "test body"));
    BOOST_REQUIRE_EQUAL(r.status, 201);
    return json::parse_trusted(r.body, "reply")["id"].GetString();
  }

  /// A movement actor was started after `before` and none is left over.
  bool back_to_baseline(const registry_counts& before) {
    return eventually(
        [&] {
          auto c = counts();
          return c.started > before.started && c.active == before.active;
        },
        15s);
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(movements)

BOOST_FIXTURE_TEST_CASE(a_request_waiting_for_approval_holds_no_movement_actor, movements_fixture) {
  start_with_api();
  auto base = counts();
  create();
  BOOST_TEST(back_to_baseline(base)); // its actor reconciled once and quit
  BOOST_TEST(stop() == 0);
}

BOOST_FIXTURE_TEST_CASE(a_rejected_request_leaves_active_movements_at_baseline, movements_fixture) {
  start_with_api();
  auto base = counts();
  auto id = create();
  BOOST_REQUIRE_EQUAL(svc->reject(bob, id, json::parse_trusted(R"({"reason": "no"})", "b")).status,
                      200);
  BOOST_TEST(snapshot(id).request_state == domain::request_state::rejected);
  BOOST_TEST(back_to_baseline(base));
  BOOST_TEST(stop() == 0);
}

BOOST_FIXTURE_TEST_CASE(a_cancelled_unapproved_request_leaves_active_movements_at_baseline,
                        movements_fixture) {
  start_with_api();
  auto base = counts();
  auto id = create();
  BOOST_REQUIRE_EQUAL(svc->cancel(bob, id, json::parse_trusted(R"({"reason": "no"})", "b")).status,
                      200);
  BOOST_TEST(snapshot(id).request_state == domain::request_state::cancelled);
  BOOST_TEST(back_to_baseline(base));
  BOOST_TEST(stop() == 0);
}

BOOST_FIXTURE_TEST_CASE(an_expired_request_leaves_active_movements_at_baseline, movements_fixture) {
  settings.approval_ttl_seconds = 1;
  settings.expiration_check_interval_seconds = 0.2;
  apply_settings();
  start_with_api();
  auto base = counts();
  auto id = create();
  BOOST_TEST(wait_for(
      "SELECT request_state = 'EXPIRED' FROM movement_requests WHERE id = '" + id + "'", 15s));
  BOOST_TEST(back_to_baseline(base));
  BOOST_TEST(stop() == 0);
}

BOOST_FIXTURE_TEST_CASE(a_completed_request_leaves_active_movements_at_baseline,
                        movements_fixture) {
  start_with_api();
  auto base = counts();
  auto id = create();
  BOOST_REQUIRE_EQUAL(svc->approve(bob, id, empty).status, 200);
  BOOST_TEST(eventually(
      [&] { return snapshot(id).request_state == domain::request_state::completed; }, 15s));
  BOOST_TEST(back_to_baseline(base));
  BOOST_TEST(stop() == 0);
}

BOOST_FIXTURE_TEST_CASE(an_approval_reconciled_in_its_transaction_starts_no_movement_actor,
                        movements_fixture) {
  start_with_api();
  auto base = counts();
  auto id = create();
  BOOST_REQUIRE(back_to_baseline(base)); // the create's own reconcile
  auto approved = counts();
  BOOST_REQUIRE_EQUAL(svc->approve(bob, id, empty).status, 200);
  BOOST_TEST(eventually(
      [&] { return snapshot(id).request_state == domain::request_state::completed; }, 15s));
  // The approval reconciled the request under its locks; node results are
  // reconciled in their own transactions: nothing was left for an actor.
  BOOST_TEST(counts().started == approved.started);
  BOOST_TEST(stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
