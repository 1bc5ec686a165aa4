// actors/workers/worker_table: one declaration per worker decides its name,
// group, interval, gate and link; the runtime starts exactly what it allows.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "actors/workers/worker_table.hpp"
#include "tests/support/runtime_fixture.hpp"

using namespace mg;

namespace {

const std::set<std::string> core_workers = {
    "node_dispatcher", "node_observer",    "node_recovery",       "cluster_lease",
    "reconcile_sweep", "evm_nonce_reaper", "ccip_stranded_reaper"};

std::vector<std::string> names_of(const std::vector<actors::worker_spec>& specs) {
  std::vector<std::string> names;
  for (auto& s : specs)
    names.push_back(s.name);
  return names;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

struct table_fixture : test::runtime_fixture {
  std::vector<actors::worker_spec> built() {
    apply_settings();
    return actors::make_workers({ctx, sys.get(), std::make_shared<actors::runtime_links>()});
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(worker_table)

BOOST_AUTO_TEST_CASE(every_worker_is_declared_once_in_the_reference_group) {
  std::set<std::string> seen;
  for (auto& d : actors::worker_table()) {
    BOOST_TEST(seen.insert(d.name).second, d.name);
    auto expected =
        core_workers.count(d.name) ? actors::worker_group::core : actors::worker_group::sidecar;
    BOOST_TEST((d.group == expected), d.name);
  }
  BOOST_TEST(seen.size() == 20u); // 17 of the reference, the lease, the sweep, the listener
  BOOST_CHECK_THROW(actors::declared_worker("no_such_worker"), std::out_of_range);
}

BOOST_FIXTURE_TEST_CASE(the_defaults_start_the_engine_sidecars_and_default_on_reapers,
                        table_fixture) {
  auto specs = built();
  auto names = names_of(specs);
  const std::vector<std::string> engine = {
      "node_dispatcher",   "node_dispatcher_2", "node_dispatcher_3",
      "node_dispatcher_4", "node_observer",     "node_recovery",
      "cluster_lease",     "reconcile_sweep",   "dispatch_listener"};
  BOOST_REQUIRE(names.size() >= engine.size());
  BOOST_TEST(std::vector<std::string>(names.begin(), names.begin() + engine.size()) == engine,
             boost::test_tools::per_element());
  for (auto* on : {"expiration_checker", "callback_dispatcher", "balance_history_rollup",
                   "ccip_stranded_reaper"})
    BOOST_TEST(has(names, on), on);
  // Off by default, or on without a configured client (skipped).
  for (auto* off : {"notification_dispatcher", "balance_snapshot", "verify_drift", "ccip_drift",
                    "capital_transfer_followup", "cex_transfer_ingest", "evm_nonce_reaper"})
    BOOST_TEST(!has(names, off), off);
}

BOOST_FIXTURE_TEST_CASE(links_and_busy_flags_come_from_the_declaration, table_fixture) {
  for (auto& spec : built()) {
    bool dispatcher = spec.name.rfind("node_dispatcher", 0) == 0;
    BOOST_TEST((spec.link == actors::worker_link::dispatcher) == dispatcher, spec.name);
    BOOST_TEST(bool(spec.busy) == dispatcher, spec.name);
    if (spec.name == "node_observer")
      BOOST_TEST((spec.link == actors::worker_link::observer));
    if (spec.name == "node_recovery")
      BOOST_TEST((spec.link == actors::worker_link::recovery));
    if (spec.name == "cluster_lease") {
      BOOST_TEST((spec.link == actors::worker_link::lease));
      BOOST_TEST(spec.outlives_drain);
    } else {
      BOOST_TEST(!spec.outlives_drain, spec.name);
    }
  }
}

BOOST_FIXTURE_TEST_CASE(intervals_and_the_lease_backoff_come_from_settings, table_fixture) {
  settings.node_recovery_interval_seconds = 13;
  settings.cluster_lease_renew_seconds = 3;
  settings.worker_jitter_seconds = 0.25;
  for (auto& spec : built()) {
    if (spec.name == "node_recovery") {
      BOOST_TEST(spec.policy.interval_seconds == 13.0);
      BOOST_TEST(spec.policy.jitter_seconds == 0.25);
      BOOST_TEST(spec.policy.drain);
    }
    if (spec.name == "cluster_lease") {
      BOOST_TEST(spec.policy.interval_seconds == 3.0);
      BOOST_TEST(spec.policy.max_error_backoff_seconds == 3.0);
      BOOST_TEST(!spec.policy.drain);
    }
    if (spec.name == "dispatch_listener") // its pass waits for a NOTIFY itself
      BOOST_TEST(spec.policy.jitter_seconds == 0.0);
  }
}

BOOST_FIXTURE_TEST_CASE(wakeups_off_run_one_dispatcher_and_no_listener, table_fixture) {
  settings.wakeups_enabled = false;
  auto names = names_of(built());
  BOOST_TEST(std::count_if(names.begin(), names.end(), [](const std::string& n) {
               return n.rfind("node_dispatcher", 0) == 0;
             }) == 1);
  BOOST_TEST(has(names, "node_dispatcher"));
  BOOST_TEST(!has(names, "dispatch_listener"));
}

BOOST_FIXTURE_TEST_CASE(workers_off_leave_only_the_engine, table_fixture) {
  settings.workers_enabled = false;
  settings.notify_enabled = true; // a flag alone does not start a sidecar
  auto names = names_of(built());
  const std::set<std::string> engine = {
      "node_dispatcher",   "node_dispatcher_2", "node_dispatcher_3",
      "node_dispatcher_4", "node_observer",     "node_recovery",
      "cluster_lease",     "reconcile_sweep",   "dispatch_listener"};
  BOOST_TEST(std::set<std::string>(names.begin(), names.end()) == engine,
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
