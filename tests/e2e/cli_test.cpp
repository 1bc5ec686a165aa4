// The movegate CLI as a user runs it.
#include <boost/test/unit_test.hpp>
#include <csignal>
#include <thread>

#include "build_paths.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/process.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

std::string log_path(const std::string& name) {
  return std::string(MG_BINARY_DIR) + "/e2e-" + name + ".log";
}

} // namespace

BOOST_AUTO_TEST_SUITE(cli)

BOOST_FIXTURE_TEST_CASE(demo_settles_every_movement_as_expected, test::db_fixture) {
  test::child demo({"demo", "--timeout", "90"}, {{"MG_DATABASE_URL", url}}, log_path("demo"));
  int code = demo.wait(120s);
  auto out = demo.log();
  BOOST_TEST_MESSAGE(out);
  BOOST_TEST(code == 0);
  BOOST_TEST(out.find("demo: every movement settled as expected") != std::string::npos);
  BOOST_TEST(count("SELECT count(*) FROM movement_requests WHERE request_state = 'COMPLETED'") ==
             3);
  BOOST_TEST(count("SELECT count(*) FROM movement_requests"
                   " WHERE request_state = 'MANUAL_INTERVENTION'") == 1);
}

BOOST_FIXTURE_TEST_CASE(invalid_setting_stops_start_up_naming_the_variable, test::db_fixture) {
  test::child serve({"serve"},
                    {{"MG_DATABASE_URL", url}, {"MG_NODE_DISPATCH_INTERVAL_SECONDS", "soon"}},
                    log_path("bad-setting"));
  BOOST_TEST(serve.wait(10s) == 2);
  BOOST_TEST(serve.log().find("MG_NODE_DISPATCH_INTERVAL_SECONDS") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(missing_database_url_is_refused, test::db_fixture) {
  test::child serve({"serve"}, {{"MG_DATABASE_URL", ""}}, log_path("no-url"));
  BOOST_TEST(serve.wait(10s) == 2);
  BOOST_TEST(serve.log().find("MG_DATABASE_URL") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(serve_stops_cleanly_on_sigterm, test::db_fixture) {
  // A movement in progress: its first node completed (so its movement actor
  // has reconciled), the second is submitted and not due for 300 s.
  add_template(R"({"template_key": "parked2", "version": 1,
    "nodes": [{"node_key": "a", "action_type": "step"},
              {"node_key": "b", "action_type": "step",
               "config": {"sim": {"polls_until_done": 1000, "retry_after_seconds": 300}}}],
    "edges": [["a", "b"]]})");
  test::child serve({"serve"}, {{"MG_DATABASE_URL", url}}, log_path("sigterm"));
  BOOST_REQUIRE(serve.wait(1000ms) == -1); // still running
  auto id = create_and_approve("parked2");
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (node_state(id, "b") != "SUBMITTED" && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  BOOST_REQUIRE(node_state(id, "b") == "SUBMITTED");
  serve.signal(SIGTERM);
  // Promptly: nothing (a movement actor's pending request timeout included)
  // keeps the process alive.
  BOOST_TEST(serve.wait(5s) == 0);
  BOOST_TEST(serve.log().find("\"runtime stopped\",\"exit_code\":0") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(migrate_twice_and_concurrently_is_safe, test::db_fixture) {
  // The fixture's database is already migrated: both runs find nothing to do.
  test::child m1({"migrate"}, {{"MG_DATABASE_URL", url}}, log_path("migrate-1"));
  test::child m2({"migrate"}, {{"MG_DATABASE_URL", url}}, log_path("migrate-2"));
  BOOST_TEST(m1.wait(30s) == 0);
  BOOST_TEST(m2.wait(30s) == 0);
  BOOST_TEST(m1.log().find("schema up to date") != std::string::npos);
  BOOST_TEST(count("SELECT count(*) FROM schema_migrations") ==
             count("SELECT max(version) FROM schema_migrations"));
}

BOOST_AUTO_TEST_SUITE_END()
