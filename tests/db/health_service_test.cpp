// services/health_service: what the admin listener's readiness, workers
// and metrics routes read — answers from a primary, and a lost database as
// an answer of its own (false, "null", nullopt), never an exception.
#include <boost/test/unit_test.hpp>

#include "domain/json.hpp"
#include "services/health_service.hpp"
#include "tests/support/db_fixture.hpp"

using namespace mg;

namespace {

struct health_fixture : test::db_fixture {
  db::connection_pool pool{url, 1};
  db::connection_pool nowhere{"postgresql://127.0.0.1:1/none?connect_timeout=1", 1};
};

} // namespace

BOOST_AUTO_TEST_SUITE(health_service)

BOOST_FIXTURE_TEST_CASE(a_primary_accepts_writes_and_no_server_does_not, health_fixture) {
  BOOST_TEST(services::database_accepts_writes(pool));
  BOOST_TEST(!services::database_accepts_writes(nowhere));
}

BOOST_FIXTURE_TEST_CASE(heartbeats_are_an_array_or_null_when_unreachable, health_fixture) {
  exec("INSERT INTO worker_heartbeats (worker_name, runtime_node, network_class, worker_group,"
       " status) VALUES ('node_dispatcher', 'n1', 'devnet', 'core', 'running')");
  auto doc = json::parse(services::worker_heartbeats_json(pool));
  BOOST_REQUIRE(doc);
  BOOST_REQUIRE(doc->IsArray());
  BOOST_TEST(doc->Size() == 1u);
  BOOST_TEST(services::worker_heartbeats_json(nowhere) == "null");
}

BOOST_FIXTURE_TEST_CASE(metrics_snapshot_or_nothing_when_unreachable, health_fixture) {
  BOOST_TEST(services::read_metrics(pool, "devnet", 8).has_value());
  BOOST_TEST(!services::read_metrics(nowhere, "devnet", 8).has_value());
}

BOOST_AUTO_TEST_SUITE_END()
