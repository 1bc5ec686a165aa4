// `movegate bench` end to end on the test's own database: a small run
// settles every movement and reports throughput, latency and memory. The
// figures themselves are the bench's business (no timed assertions here).
#include <boost/test/unit_test.hpp>
#include <sstream>
#include <string>
#include <vector>

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

/// `movegate bench --movements 40 --no-compare --json` with `extra`; its
/// report line, once it exited 0.
std::string run_bench(const std::string& url, std::vector<std::string> extra,
                      const std::string& log_name) {
  std::vector<std::string> argv{"bench", "--movements", "40", "--no-compare", "--json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  test::child bench(argv, {{"MG_DATABASE_URL", url}, {"MG_LOG_LEVEL", "warn"}},
                    std::string(MG_BINARY_DIR) + "/" + log_name + ".log");
  BOOST_TEST(bench.wait(120s) == 0, bench.log());
  auto report = report_line(bench.log());
  BOOST_REQUIRE_MESSAGE(!report.empty(), bench.log());
  return report;
}

} // namespace

BOOST_AUTO_TEST_SUITE(bench_cli)

BOOST_FIXTURE_TEST_CASE(a_small_run_settles_everything_and_reports_speed_and_memory,
                        test::db_fixture) {
  auto report = run_bench(url, {"--latency-movements", "10", "--pace-ms", "5"}, "e2e-bench-cli");
  BOOST_TEST(number(report, "completed") == 40);
  BOOST_TEST(number(report, "nodes_per_s") > 0);
  // Like the peer harness's jobs, the backlog was approved before the
  // runtime started.
  BOOST_TEST(test::json_field(report, "approved") == "before_start", report);
  BOOST_TEST(number(report, "approvals_per_s") > 0);
  // The server's costs per node of the throughput phase, read once its
  // runtime's backends had gone (this fixture's own connections stay).
  BOOST_TEST(test::json_field(report, "counters_exact") == "true", report);
  BOOST_TEST(number(report, "wal_sync_per_node") > 0);
  BOOST_TEST(number(report, "xact_commit_per_node") > 0);
  // SUBMITTING and a result for every node; READY only for a node that
  // waited for the FIFO (a successor the chain claim took goes straight
  // from BLOCKED to SUBMITTING; the first nodes were activated by their
  // approvals before the phase's counters were read).
  BOOST_TEST(number(report, "node_updates") >= 40 * 4 * 2);
  BOOST_TEST(number(report, "hot_share") >= 0);
  auto hop = test::json_field(report, "hop_ms");
  BOOST_TEST(number(hop, "samples") == 30); // 10 chains of 4: three hops each
  auto memory = test::json_field(report, "memory_mib");
  BOOST_TEST(number(memory, "peak") > 0);
  BOOST_TEST(number(memory, "peak") >= number(memory, "after_latency"));
  // Every sampled movement actor was alive at once, and weighed something.
  auto actors = test::json_field(report, "movement_actor_memory");
  BOOST_TEST(number(actors, "actors") == 20000);
  BOOST_TEST(number(actors, "bytes_per_actor") > 0);
  BOOST_TEST(count("SELECT count(*) FROM movement_requests WHERE request_state = 'COMPLETED'") ==
             50);
  // A backlog, approved one by one after all of it was created, does not
  // expire on the way (the default approval TTL is 5 minutes).
  BOOST_TEST(count("SELECT count(*) FROM movement_requests"
                   " WHERE expires_at < created_at + interval '1 hour'") == 0);
}

BOOST_FIXTURE_TEST_CASE(a_run_approving_while_it_works_counts_the_approvals_in, test::db_fixture) {
  auto report = run_bench(url, {"--latency-movements", "0", "--approve-while-running"},
                          "e2e-bench-cli-while-running");
  BOOST_TEST(number(report, "completed") == 40);
  BOOST_TEST(test::json_field(report, "approved") == "while_running", report);
  BOOST_TEST(number(report, "approvals_per_s") == 0);
  // Every node's updates are in the phase now, the first ones' READY too.
  BOOST_TEST(number(report, "node_updates") >= 40 * (4 * 2 + 1));
}

BOOST_AUTO_TEST_SUITE_END()
