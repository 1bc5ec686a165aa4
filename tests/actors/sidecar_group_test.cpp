// The always-on sidecars run in the sidecar group of a real runtime: seeded
// heartbeats say so, the supervisor lists them there, and they do their
// work (the audit promoter, the health check) while the core runs.
#include <boost/test/unit_test.hpp>

#include "actors/workers/worker_table.hpp"
#include "tests/support/db_helpers.hpp"
#include "tests/support/runtime_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

const char* const sidecar_names[] = {"expiration_checker", "template_proposal_expiration",
                                     "executor_health", "audit_outbox_promoter",
                                     "callback_dispatcher"};

} // namespace

BOOST_AUTO_TEST_SUITE(sidecar_group)

BOOST_FIXTURE_TEST_CASE(sidecar_workers_are_all_in_the_sidecar_group, test::runtime_fixture) {
  std::vector<actors::worker_spec> specs;
  for (auto* name : sidecar_names) {
    auto spec = actors::make_worker(name, ctx); // callback_dispatcher too, with or without a secret
    BOOST_REQUIRE_MESSAGE(spec, name);
    BOOST_TEST(spec->name == name);
    BOOST_TEST(std::string(to_string(spec->group)) == "sidecar");
    specs.push_back(std::move(*spec));
  }
  BOOST_TEST(specs[0].policy.interval_seconds == settings.expiration_check_interval_seconds);
  BOOST_TEST(specs[2].policy.drain == false); // every health pass "processes" something
}

BOOST_FIXTURE_TEST_CASE(runtime_runs_the_sidecars_in_the_sidecar_group, test::runtime_fixture) {
  settings.audit_outbox_promoter_interval_seconds = 0.1;
  apply_settings();
  exec("INSERT INTO audit_outbox (actor, action, subject) VALUES ('k', 'test', 's')");
  start();
  for (auto* name : sidecar_names)
    BOOST_TEST(count(std::string("SELECT count(*) FROM worker_heartbeats WHERE worker_name = '") +
                     name + "' AND worker_group = 'sidecar' AND runtime_node = 'test-node'") == 1);
  std::string status;
  (*self)
      ->request(rt->supervisor(), 5s, actors::status_atom::value)
      .receive([&](const std::string& s) { status = s; }, [&](caf::error&) {});
  for (auto* name : sidecar_names)
    BOOST_TEST(status.find(std::string("\"name\":\"") + name + "\",\"group\":\"sidecar\"") !=
               std::string::npos);
  BOOST_TEST(eventually([&] { return count("SELECT count(*) FROM audit_events") == 1; }, 5s));
  // The first health pass records this process's sim executor and signer.
  BOOST_TEST(eventually(
      [&] {
        return count("SELECT count(*) FROM executors WHERE executor_key = 'sim'"
                     " AND runtime_node = 'test-node' AND health_state = 'up'") == 1;
      },
      5s));
  BOOST_TEST(scalar("SELECT observed_signer_address FROM signers WHERE signer_key = 'sim'") ==
             "0x5157000000000000000000000000000000005157");
  BOOST_TEST(stop() == 0);
}

BOOST_FIXTURE_TEST_CASE(callback_dispatcher_without_a_secret_heartbeats_and_sends_nothing,
                        test::runtime_fixture) {
  settings.callback_secret.clear();
  settings.callback_dispatch_interval_seconds = 0.1;
  apply_settings();
  add_template(test::one_node("cb_solo"));
  auto id = create("cb_solo", "{}", "http://127.0.0.1:9/never");
  start();
  const std::string hb = "SELECT last_error FROM worker_heartbeats WHERE worker_name ="
                         " 'callback_dispatcher' AND runtime_node = 'test-node'";
  BOOST_TEST(
      eventually([&] { return scalar(hb).find("MG_CALLBACK_SECRET") != std::string::npos; }, 10s));
  BOOST_TEST(scalar("SELECT status || '/' || consecutive_errors FROM worker_heartbeats"
                    " WHERE worker_name = 'callback_dispatcher'") == "running/0");
  // Passes keep running (iterations grow) and leave the row alone.
  BOOST_TEST(eventually(
      [&] {
        return count("SELECT iterations FROM worker_heartbeats"
                     " WHERE worker_name = 'callback_dispatcher'") >= 3;
      },
      10s));
  BOOST_TEST(scalar("SELECT status || '/' || attempts FROM movement_callback_outbox"
                    " WHERE request_id = '" +
                    id + "'") == "pending/0");
  BOOST_TEST(stop() == 0);
}

BOOST_FIXTURE_TEST_CASE(api_only_process_runs_no_sidecars, test::runtime_fixture) {
  settings.workers_enabled = false;
  apply_settings();
  start();
  BOOST_TEST(count("SELECT count(*) FROM worker_heartbeats WHERE worker_group = 'sidecar'"
                   " AND worker_name = 'expiration_checker'") == 0);
  BOOST_TEST(stop() == 0);
}

BOOST_AUTO_TEST_SUITE_END()
