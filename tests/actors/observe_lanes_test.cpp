// The observer's lanes in a running runtime: with several lanes every node
// is observed exactly as often as with one (no doubled observation in a
// round), and the lanes are actors that stay (their connections persist
// from pass to pass instead of threads started per pass).
#include <boost/test/unit_test.hpp>

#include "tests/support/db_helpers.hpp"
#include "tests/support/runtime_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

constexpr int requests_per_run = 12;
constexpr int polls = 3; // OBSERVING three times, then COMPLETED: 4 observations

struct observe_fixture : test::runtime_fixture {
  observe_fixture() {
    add_template(R"({"template_key": "polled", "version": 1,
      "nodes": [{"node_key": "a", "action_type": "chain_transfer", "executor_key": "sim",
                 "config": {"sim": {"polls_until_done": 3}}}]})");
  }

  /// Runs `requests_per_run` requests to completion with `lanes` observe
  /// lanes; returns their ids.
  std::vector<std::string> run_with(int lanes) {
    settings.node_observe_concurrency = lanes;
    apply_settings();
    if (rt) {
      BOOST_REQUIRE_EQUAL(stop(), 0);
      rt.reset();
      stopped = false;
    }
    start();
    std::vector<std::string> ids;
    for (int i = 0; i < requests_per_run; ++i)
      ids.push_back(approve_and_notify("polled"));
    std::string list;
    for (auto& id : ids)
      list += (list.empty() ? "'" : ",'") + id + "'";
    BOOST_TEST(wait_for("SELECT count(*) = " + std::to_string(requests_per_run) +
                            " FROM movement_requests WHERE request_state = 'COMPLETED'"
                            " AND id IN (" +
                            list + ")",
                        60s));
    return ids;
  }

  /// observe_count and the observe proofs of the request's node, as "n/m".
  std::string observations(const std::string& request_id) {
    auto node = test::node_id(*this, request_id);
    return scalar("SELECT observe_count FROM movement_request_nodes WHERE id = '" + node + "'") +
           "/" +
           scalar("SELECT count(*) FROM node_artifacts WHERE node_id = '" + node +
                  "' AND kind = 'observe_proof'");
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(observe_lanes)

BOOST_FIXTURE_TEST_CASE(several_lanes_observe_each_node_exactly_as_often_as_one, observe_fixture) {
  auto one = run_with(1);
  // Each observation is counted once and leaves one proof.
  const std::string expected = observations(one.front());
  BOOST_TEST_MESSAGE("observe_count/observe proofs per node: " << expected);
  BOOST_TEST(expected == std::to_string(polls + 1) + "/" + std::to_string(polls + 1));
  for (auto& id : one)
    BOOST_TEST(observations(id) == expected, "one lane, request " << id);
  for (auto& id : run_with(4))
    BOOST_TEST(observations(id) == expected, "four lanes, request " << id);
  // The lanes did take part, on connections of their own that outlive a
  // pass (one lane actor each, not a thread per pass).
  BOOST_TEST(count("SELECT count(*) FROM pg_stat_activity"
                   " WHERE application_name LIKE 'movegate:node_observer-%'") >= 1);
  BOOST_TEST(stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
