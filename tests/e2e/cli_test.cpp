// The movegate CLI as a user runs it.
#include <boost/test/unit_test.hpp>
#include <csignal>
#include <thread>

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
  test::child serve({"serve"}, {{"MG_DATABASE_URL", url}}, log_path("sigterm"));
  BOOST_REQUIRE(serve.wait(1500ms) == -1); // still running
  serve.signal(SIGTERM);
  BOOST_TEST(serve.wait(20s) == 0);
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
