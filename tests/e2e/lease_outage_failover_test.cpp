// Two `movegate serve` processes with movements in flight ride out a
// PostgreSQL outage longer than the cluster lease (SPEC §8): every lease
// has expired when the server is back, but neither process declares the
// other dead — each waits for a full lease of its own renewals, and by then
// the other has renewed too — so both keep running and every movement
// completes. The test stops and starts a PostgreSQL server of its own (the
// shared one of scripts/with-pg.sh serves the parallel tests).
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "build_paths.hpp"
#include "persistence/db.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/process.hpp"

using namespace mg;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

constexpr int lease_seconds = 3;
constexpr auto outage = 8s;
constexpr int movements = 6;

double seconds_since(steady::time_point t) {
  return std::chrono::duration<double>(steady::now() - t).count();
}

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("no free port");
  close(fd);
  return ntohs(a.sin_port);
}

/// A PostgreSQL server in a temporary directory (as the postgres user when
/// run as root, like scripts/with-pg.sh), stopped and removed at the end.
/// MG_DATABASE_URL names it while it lives, so the db_fixture below makes
/// its database there.
struct private_postgres {
  private_postgres() {
    const char* b = std::getenv("MG_PG_BIN");
    bin = b && *b ? b : "/usr/lib/postgresql/15/bin";
    char tmpl[] = "/tmp/mg-lease-outage.XXXXXX";
    if (!mkdtemp(tmpl))
      throw std::runtime_error("mkdtemp failed");
    dir = tmpl;
    as_pg_prefix = getuid() == 0 ? "runuser -u postgres -- " : "";
    if (getuid() == 0)
      run("chown postgres " + dir);
    run(as_pg_prefix + "mkdir -m 700 " + dir + "/socket");
    run(as_pg_prefix + bin + "/initdb -D " + dir + "/data -U postgres -A trust -E UTF8" +
        " --locale=C.UTF-8 >" + dir + "/initdb.log 2>&1");
    std::ofstream(dir + "/data/postgresql.conf", std::ios::app)
        << "listen_addresses = '127.0.0.1'\nunix_socket_directories = '" << dir
        << "/socket'\nmax_connections = 100\n";
    for (int i = 0;; ++i) {
      port = free_port();
      if (std::system(start_command().c_str()) == 0)
        break;
      if (i == 3)
        throw std::runtime_error("PostgreSQL did not start; see " + dir + "/postgres.log");
    }
    saved_url = std::getenv("MG_DATABASE_URL") ? std::getenv("MG_DATABASE_URL") : "";
    setenv("MG_DATABASE_URL",
           ("postgresql://postgres@127.0.0.1:" + std::to_string(port) + "/postgres").c_str(), 1);
  }
  ~private_postgres() {
    setenv("MG_DATABASE_URL", saved_url.c_str(), 1);
    std::system((as_pg_prefix + bin + "/pg_ctl -D " + dir + "/data -m immediate -w -s stop" +
                 " >/dev/null 2>&1")
                    .c_str());
    std::system(("rm -rf " + dir).c_str());
  }

  void stop() { run(as_pg_prefix + bin + "/pg_ctl -D " + dir + "/data -m fast -w -s stop"); }
  void start() { run(start_command()); }

  std::string bin, dir, as_pg_prefix, saved_url;
  int port = 0;

private:
  std::string start_command() const {
    return as_pg_prefix + bin + "/pg_ctl -D " + dir + "/data -l " + dir + "/postgres.log -o '-p " +
           std::to_string(port) + "' -w -t 60 -s start >/dev/null 2>&1";
  }
  static void run(const std::string& cmd) {
    if (std::system(cmd.c_str()) != 0)
      throw std::runtime_error("failed: " + cmd);
  }
};

struct outage_fixture : private_postgres, test::db_fixture {
  std::string log_path(const std::string& name) {
    return std::string(MG_BINARY_DIR) + "/e2e-lease-outage-" + name + ".log";
  }
  /// The test's own connection after the server came back.
  void reconnect() { other = db::connect(url); }
};

/// Short lease and renewals. Dispatchers and the observer polling every 3 s
/// fail fewer than 5 passes in a row through the outage, so they stay out
/// of the loop runner's error backoff (32 s and more) and the movements go
/// on right after it; the observer without lanes, whose idle connections
/// would fail one more pass after the outage.
std::map<std::string, std::string> serve_env(const std::string& url, const std::string& node) {
  return {{"MG_DATABASE_URL", url},
          {"MG_RUNTIME_NODE", node},
          {"MG_LOG_LEVEL", "info"},
          {"MG_CLUSTER_LEASE_SECONDS", std::to_string(lease_seconds)},
          {"MG_CLUSTER_LEASE_RENEW_SECONDS", "1"},
          {"MG_NODE_DISPATCH_INTERVAL_SECONDS", "3"},
          {"MG_NODE_OBSERVE_INTERVAL_SECONDS", "3"},
          {"MG_NODE_OBSERVE_CONCURRENCY", "1"}};
}

/// A send, then a confirmation observed for about 4 s: in flight across
/// the outage.
const char* chain_template = R"({"template_key": "outage_chain", "version": 1,
    "nodes": [
      {"node_key": "send", "action_type": "chain_transfer", "side_effect": true},
      {"node_key": "confirm", "action_type": "destination_chain_finality_observe",
       "config": {"sim": {"polls_until_done": 12, "retry_after_seconds": 0.3}}}],
    "edges": [["send", "confirm"]]})";

} // namespace

BOOST_AUTO_TEST_SUITE(lease_outage_failover)

BOOST_FIXTURE_TEST_CASE(an_outage_longer_than_the_lease_costs_no_process, outage_fixture) {
  add_template(chain_template);
  std::map<std::string, std::unique_ptr<test::child>> procs;
  for (auto name : {"lo-a", "lo-b"})
    procs[name] = std::make_unique<test::child>(std::vector<std::string>{"serve"},
                                                serve_env(url, name), log_path(name));
  BOOST_REQUIRE(wait_for("SELECT count(*) = 2 FROM cluster_nodes", 15s));
  for (int i = 0; i < movements; ++i)
    create_and_approve("outage_chain");
  BOOST_REQUIRE_MESSAGE(wait_for("SELECT bool_and(node_state IN ('SUBMITTED', 'OBSERVING')) FROM"
                                 " movement_request_nodes WHERE node_key = 'confirm'",
                                 15s),
                        procs["lo-a"]->log() + procs["lo-b"]->log());
  std::cout << "lease_outage_failover: confirm nodes claimed at the outage: "
            << scalar("SELECT string_agg(coalesce(claimed_by, '-'), ' ' ORDER BY claimed_by)"
                      " FROM movement_request_nodes WHERE node_key = 'confirm'")
            << std::endl;

  auto down = steady::now();
  stop(); // a fast shutdown ends every connection at once, then checkpoints
  double stop_seconds = seconds_since(down);
  std::this_thread::sleep_until(down + outage);
  start();
  auto up = steady::now();
  reconnect();
  double outage_seconds = std::chrono::duration<double>(up - down).count();

  // Every lease expired meanwhile; both processes renew theirs again.
  BOOST_REQUIRE_MESSAGE(wait_for("SELECT count(*) = 2 AND bool_and(last_seen_at > now() -"
                                 " interval '1 s') FROM cluster_nodes",
                                 10s),
                        procs["lo-a"]->log() + procs["lo-b"]->log());
  double renewed_after = seconds_since(up);
  BOOST_REQUIRE_MESSAGE(wait_for("SELECT count(*) = " + std::to_string(movements) +
                                     " FROM movement_requests WHERE request_state = 'COMPLETED'",
                                 30s),
                        procs["lo-a"]->log() + procs["lo-b"]->log());
  double completed_after = seconds_since(up);
  // Past the point where a take-over would have happened.
  auto settle = std::chrono::duration<double>(2.0 * lease_seconds) - (steady::now() - up);
  if (settle.count() > 0)
    std::this_thread::sleep_for(settle);
  std::cout << "lease_outage_failover: outage " << outage_seconds << " s (stop took "
            << stop_seconds << " s; lease " << lease_seconds << " s); both leases renewed "
            << renewed_after << " s and all " << movements << " movements completed "
            << completed_after << " s after the server was back" << std::endl;

  for (auto& [name, p] : procs) {
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST(p->running());
      auto log = p->log();
      BOOST_TEST(log.find("took over a dead runtime node") == std::string::npos);
      BOOST_TEST(log.find("cluster lease lost") == std::string::npos);
      BOOST_TEST(log.find("cluster lease renewed after an interruption") != std::string::npos);
    }
  }
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes") == 2);
  BOOST_TEST(count("SELECT count(*) FROM movement_events"
                   " WHERE payload->'data'->>'error_code' = 'RUNTIME_NODE_LOST'") == 0);
  // One accepted submit per send node: nothing was handed over twice.
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger l JOIN movement_request_nodes n"
                   " ON n.id = l.node_id WHERE n.node_key = 'send' AND NOT l.fenced") == movements);
  for (auto& [name, p] : procs) {
    p->signal(SIGTERM);
    BOOST_TEST(p->wait(20s) == 0, name);
  }
}

BOOST_AUTO_TEST_SUITE_END()
