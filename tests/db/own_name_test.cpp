// Start-up under a name whose lease is still live (SPEC §8 "Restart under
// its own name"), on the real database: a provably dead holder is taken
// over at once and its SUBMITTING work goes to recovery with a new token;
// a holder this process cannot see (another boot, or a row without an
// identity) is waited out, changing nothing, until its lease expires.
#include <boost/test/unit_test.hpp>

#include "actors/own_name.hpp"
#include "actors/proc_identity.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

constexpr double lease = 8;

struct own_name_fixture : db_fixture {
  own_name_fixture() { add_template(one_node("solo")); }

  actors::name_attempt claim(const std::string& name) {
    return actors::try_claim_name(conn.get(), name, {"127.0.0.1", 4242}, lease,
                                  settings.callback_max_attempts, actors::this_process_identity());
  }

  /// A request whose only node `by` holds in SUBMITTING; its node id.
  std::string submitting_node(const std::string& by) {
    auto id = create_and_approve("solo");
    auto n = node_id(*this, id);
    exec("UPDATE movement_requests SET request_state = 'EXECUTING' WHERE id = '" + id + "'");
    exec("UPDATE movement_request_nodes SET node_state = 'SUBMITTING', attempt_no = 1,"
         " idempotency_key = id || ':1', claim_token = gen_random_uuid(), claimed_by = '" +
         by + "', claimed_at = now(), started_at = now(), ever_submitted = true WHERE id = '" + n +
         "'");
    return n;
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(own_name)

BOOST_FIXTURE_TEST_CASE(a_dead_holder_within_its_lease_is_taken_over_at_once, own_name_fixture) {
  BOOST_REQUIRE(claim("own-a").joined);
  auto n = submitting_node("own-a");
  auto old_token = node_col(*this, n, "claim_token");
  // The holder was an earlier process with this pid: same machine, boot
  // and namespace, another start time. Its lease is fresh.
  exec("UPDATE cluster_nodes SET holder_start_time = holder_start_time + 1,"
       " last_seen_at = now() WHERE runtime_node = 'own-a'");
  auto taken = claim("own-a");
  BOOST_REQUIRE(taken.joined);
  BOOST_REQUIRE(taken.handed_over);
  BOOST_TEST(taken.handed_over->sent_to_recovery == 1);
  BOOST_TEST(taken.reason.find("another process") != std::string::npos);
  BOOST_TEST(node_col(*this, n, "node_state") == "UNKNOWN");
  BOOST_TEST(node_col(*this, n, "error_code") == "RUNTIME_NODE_LOST");
  BOOST_TEST(node_col(*this, n, "claim_token") != old_token);
  auto me = actors::this_process_identity();
  BOOST_TEST(scalar("SELECT holder_start_time FROM cluster_nodes WHERE runtime_node = 'own-a'") ==
             std::to_string(me.start_time));
  // Now this process holds it, alive: a second start is refused.
  BOOST_CHECK_THROW(claim("own-a"), std::runtime_error);
}

BOOST_FIXTURE_TEST_CASE(an_unprovable_holder_is_waited_out_until_its_lease_expires,
                        own_name_fixture) {
  BOOST_REQUIRE(claim("own-b").joined);
  auto n = submitting_node("own-b");
  for (const std::string change :
       {"holder_boot_id = 'another-boot'", "holder_machine_id = NULL, holder_boot_id = NULL,"
                                           " holder_pid_namespace = NULL, holder_pid = NULL,"
                                           " holder_start_time = NULL"}) {
    exec("UPDATE cluster_nodes SET " + change + " WHERE runtime_node = 'own-b'");
    auto waiting = claim("own-b");
    BOOST_TEST(!waiting.joined, change);
    BOOST_TEST(!waiting.reason.empty());
    BOOST_TEST(waiting.lease_remaining_seconds > 0);
    BOOST_TEST(waiting.lease_remaining_seconds <= lease);
    BOOST_TEST(node_col(*this, n, "node_state") == "SUBMITTING"); // nothing changed
  }
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes WHERE holder_pid IS NULL") == 1);
  exec("UPDATE cluster_nodes SET last_seen_at = now() - interval '9 seconds'");
  auto joined = claim("own-b");
  BOOST_REQUIRE(joined.joined);
  BOOST_REQUIRE(joined.handed_over);
  BOOST_TEST(joined.handed_over->sent_to_recovery == 1);
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes WHERE holder_pid IS NOT NULL") == 1);
}

BOOST_AUTO_TEST_SUITE_END()
