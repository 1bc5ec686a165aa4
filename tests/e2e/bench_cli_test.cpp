// `movegate bench` end to end on the test's own database: a small run
// settles every movement and reports throughput, latency and memory. The
// figures themselves are the bench's business (no timed assertions here).
#include <boost/test/unit_test.hpp>
#include <sstream>
#include <string>

#include "build_paths.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/process.hpp"
#include "tests/support/serve_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

/// The JSON line bench prints on stdout (logs and progress go around it).
std::string report_line(const std::string& output) {
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind("{\"shape\":", 0) == 0)
      return line;
  return "";
}

double number(const std::string& json, const char* name) {
  auto v = test::json_field(json, name);
  return v.empty() ? -1 : std::stod(v);
}

} // namespace

BOOST_AUTO_TEST_SUITE(bench_cli)

BOOST_FIXTURE_TEST_CASE(a_small_run_settles_everything_and_reports_speed_and_memory,
                        test::db_fixture) {
  test::child bench({"bench", "--movements", "40", "--latency-movements", "10", "--pace-ms", "5",
                     "--no-compare", "--json"},
                    {{"MG_DATABASE_URL", url}, {"MG_LOG_LEVEL", "warn"}},
                    std::string(MG_BINARY_DIR) + "/e2e-bench-cli.log");
  BOOST_TEST(bench.wait(120s) == 0, bench.log());
  auto report = report_line(bench.log());
  BOOST_REQUIRE_MESSAGE(!report.empty(), bench.log());
  BOOST_TEST(number(report, "completed") == 40);
  BOOST_TEST(number(report, "nodes_per_s") > 0);
  // The server's costs per node of the throughput phase, read once its
  // runtime's backends had gone (this fixture's own connections stay).
  BOOST_TEST(test::json_field(report, "counters_exact") == "true", report);
  BOOST_TEST(number(report, "wal_sync_per_node") > 0);
  BOOST_TEST(number(report, "xact_commit_per_node") >= 1);  // at least the approvals
  BOOST_TEST(number(report, "node_updates") >= 40 * 4 * 3); // READY, SUBMITTING, a result
  BOOST_TEST(number(report, "hot_share") >= 0);
  auto hop = test::json_field(report, "hop_ms");
  BOOST_TEST(number(hop, "samples") == 30); // 10 chains of 4: three hops each
  auto memory = test::json_field(report, "memory_mib");
  BOOST_TEST(number(memory, "peak") > 0);
  BOOST_TEST(number(memory, "peak") >= number(memory, "after_latency"));
  BOOST_TEST(count("SELECT count(*) FROM movement_requests WHERE request_state = 'COMPLETED'") ==
             50);
  // A backlog, approved one by one after all of it was created, does not
  // expire on the way (the default approval TTL is 5 minutes).
  BOOST_TEST(count("SELECT count(*) FROM movement_requests"
                   " WHERE expires_at < created_at + interval '1 hour'") == 0);
}

BOOST_AUTO_TEST_SUITE_END()
