// Two `movegate serve` processes ride the loss of a PostgreSQL primary with
// nothing lost (runs under scripts/with-pg-ha.sh: a pg_auto_failover monitor,
// primary and synchronous secondary; MG_DATABASE_URL names both nodes with
// target_session_attrs=read-write). Chain movements, some with callbacks, are
// created through the API while the primary goes: a planned `pg_autoctl
// perform failover`, a SIGKILL of its postmaster, or its keeper and
// postmaster killed together (an unplanned failover). Each time every
// movement completes, each send node has exactly one accepted submit, every
// callback row is delivered, /readyz answers 503 while no primary is
// reachable and 200 after, and the API never answers 500.
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "domain/json.hpp"
#include "persistence/db.hpp"
#include "tests/support/callback_receiver.hpp"
#include "tests/support/cluster_fixture.hpp"
#include "tests/support/serve_fixture.hpp"

using namespace mg;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

const test::api_key_spec creator{"creator", "c4ea7e00c4ea7e00c4ea7e00c4ea7e00",
                                 R"(["create", "read"])"};
const test::api_key_spec approver{"approver", "a11ce000a11ce000a11ce000a11ce000",
                                  R"(["approve", "read"])"};
const char* const callback_secret = "ha-callback-secret-42";
constexpr int callback_every = 5;    // every 5th movement has a callback_url
constexpr auto call_patience = 120s; // an API call retried on 503 gives up after this

std::string required_env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v)
    throw std::runtime_error(std::string(name) + " is not set: run under scripts/with-pg-ha.sh");
  return v;
}

/// One value of `sql` from whichever server is primary now, reconnecting
/// while a failover makes the connection fail.
std::string primary_scalar(const std::string& url, const std::string& sql) {
  auto deadline = steady::now() + 60s;
  for (;;) {
    try {
      auto c = db::connect(url);
      pqxx::nontransaction tx(*c);
      auto r = tx.exec(sql);
      return r.empty() || r[0][0].is_null() ? "" : r[0][0].c_str();
    } catch (const std::exception& e) {
      if (!db::is_connection_error(e) || steady::now() > deadline)
        throw;
      std::this_thread::sleep_for(200ms);
    }
  }
}

/// Polls `sql` (a boolean) on the primary until it holds or `timeout` passes.
bool primary_wait(const std::string& url, const std::string& sql, std::chrono::seconds timeout) {
  auto deadline = steady::now() + timeout;
  while (steady::now() < deadline) {
    if (primary_scalar(url, sql) == "t")
      return true;
    std::this_thread::sleep_for(200ms);
  }
  return false;
}

double epoch_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// Every HTTP status the test saw, for the "never 500" check.
struct status_tally {
  std::mutex mutex;
  std::map<int, int> seen;
  void add(int status) {
    std::lock_guard<std::mutex> lock(mutex);
    ++seen[status];
  }
  std::string str() {
    std::lock_guard<std::mutex> lock(mutex);
    std::string out;
    for (auto& [s, n] : seen)
      out += std::to_string(s) + "x" + std::to_string(n) + " ";
    return out;
  }
};

struct ha_fixture : test::serve_fixture {
  std::string monitor_uri = required_env("MG_PG_HA_MONITOR_URI");
  std::string ctl = required_env("MG_PG_HA_CTL");
  test::callback_receiver receiver;
  std::unique_ptr<test::child> second;
  int second_api_port = 0;
  status_tally api_statuses;

  ha_fixture() {
    add_template(test::cluster_movements::chain_template);
    keys = {creator, approver};
  }
  ~ha_fixture() {
    if (second && second->running()) {
      second->signal(SIGTERM);
      second->wait(60s);
    }
  }

  /// Short recovery bounds: a node whose claim commit was lost in the
  /// failover is recovered within the test's patience. The lease outlasts
  /// the outage (a process may not declare its peer dead for a database
  /// outage it could not renew through either).
  std::map<std::string, std::string> tuning() const {
    return {{"MG_CALLBACK_SECRET", callback_secret},    {"MG_CALLBACK_ALLOW_PRIVATE", "true"},
            {"MG_NODE_SUBMITTING_GRACE_SECONDS", "15"}, {"MG_EXECUTOR_TIMEOUT_SECONDS", "5"},
            {"MG_NODE_RECOVERY_INTERVAL_SECONDS", "2"}, {"MG_CLUSTER_LEASE_SECONDS", "60"}};
  }

  void start_both() {
    auto e2 = env("ha-b");
    second_api_port = api_port;
    for (auto& [k, v] : tuning())
      e2[k] = v;
    start("ha-a", tuning()); // the fixture's own ports now name process A
    second =
        std::make_unique<test::child>(std::vector<std::string>{"serve"}, e2, prefix + "-ha-b.log");
    // B's cluster row comes before its API listens.
    test::api_client b(second_api_port, "", "");
    test::request_options unsigned_call;
    unsigned_call.sign = false;
    for (auto deadline = steady::now() + 30s;;) {
      try {
        b.get("/v3/movements", unsigned_call);
        break;
      } catch (const std::exception&) {
        BOOST_REQUIRE_MESSAGE(steady::now() < deadline,
                              "process B never listened: " + second->log());
        std::this_thread::sleep_for(100ms);
      }
    }
  }

  /// `call` until it answers something else than 503 (the database away).
  test::api_reply until_not_503(const std::function<test::api_reply()>& call, bool* saw_503) {
    auto deadline = steady::now() + call_patience;
    for (;;) {
      auto r = call();
      api_statuses.add(r.status);
      if (r.status != 503 || steady::now() > deadline)
        return r;
      *saw_503 = true;
      std::this_thread::sleep_for(200ms);
    }
  }

  /// Creates and approves movement `i` through process A or B (alternating),
  /// retrying on 503 with the same idempotency key.
  bool create_and_approve(int i) {
    int port = i % 2 == 0 ? api_port : second_api_port;
    test::api_client c(port, creator.id, creator.secret);
    test::api_client a(port, approver.id, approver.secret);
    std::string body = test::cluster_movements::create_body("ha-" + std::to_string(i));
    if (i % callback_every == 0)
      body.insert(body.size() - 1, R"(, "callback_url": ")" + receiver.url() + "\"");
    bool retried = false;
    auto created = until_not_503([&] { return c.post("/v3/movements", body); }, &retried);
    if (!(created.status == 201 || (retried && created.status == 200)))
      return refused("create", i, created);
    auto id = test::json_field(created.body, "id");
    retried = false;
    auto approved = until_not_503(
        [&] { return a.post("/v3/movements/" + id + "/approve", R"({"approver_id": "ops"})"); },
        &retried);
    // A 503 may hide a committed approve (its answer lost with the primary):
    // the retry then finds the movement already approved.
    if (!(approved.status == 200 || (retried && approved.status == 409)))
      return refused("approve", i, approved);
    return true;
  }

  /// Boost.Test assertions belong to the main thread: the clients report.
  bool refused(const char* what, int i, const test::api_reply& r) {
    std::lock_guard<std::mutex> lock(api_statuses.mutex);
    std::cerr << "pg_failover: " << what << " " << i << " answered " << r.status << " " << r.body
              << std::endl;
    return false;
  }

  /// The node that takes writes and is settled there, 0 if none is.
  /// wait_primary: a primary whose secondary is gone (it then commits
  /// without a synchronous standby).
  int primary_port() {
    auto c = db::connect(monitor_uri);
    pqxx::nontransaction tx(*c);
    auto r = tx.exec("SELECT nodeport FROM pgautofailover.node WHERE reportedstate = goalstate"
                     " AND reportedstate IN ('primary', 'wait_primary')");
    return r.size() == 1 ? r[0][0].as<int>() : 0;
  }
  int settled_primary_port(std::chrono::seconds timeout) {
    auto deadline = steady::now() + timeout;
    for (;;) {
      int port = primary_port();
      if (port != 0 || steady::now() > deadline)
        return port;
      std::this_thread::sleep_for(200ms);
    }
  }

  /// Data directory and keeper process group of the node on `port`.
  std::pair<std::string, int> node_of(int port) {
    std::istringstream ports(required_env("MG_PG_HA_PORTS")), data(required_env("MG_PG_HA_DATA")),
        keepers(required_env("MG_PG_HA_KEEPERS"));
    int p = 0, group = 0;
    std::string dir;
    while (ports >> p && data >> dir && keepers >> group)
      if (p == port)
        return {dir, group};
    throw std::runtime_error("no node on port " + std::to_string(port));
  }
  static pid_t postmaster_of(const std::string& dir) {
    std::ifstream f(dir + "/postmaster.pid");
    pid_t pid = 0;
    f >> pid;
    if (pid <= 0)
      throw std::runtime_error("no postmaster.pid in " + dir);
    return pid;
  }

  /// The monitor's health checks, tuned so that a lost primary is declared
  /// unhealthy (and its standby promoted) within seconds rather than after
  /// the defaults' 20 s unhealthy timeout plus 30 s demote timeout.
  static constexpr const char* tuned_monitor[][2] = {{"health_check_period", "1000"},
                                                     {"health_check_timeout", "1000"},
                                                     {"health_check_max_retries", "1"},
                                                     {"health_check_retry_delay", "500"},
                                                     {"node_considered_unhealthy_timeout", "2000"},
                                                     {"primary_demote_timeout", "3000"}};
  std::string tune_monitor() {
    std::string cmd = required_env("MG_PG_HA_MONITOR_PSQL") + " -q";
    std::string shown;
    for (auto& [name, value] : tuned_monitor) {
      cmd += " -c \"ALTER SYSTEM SET pgautofailover." + std::string(name) + " = " + value + "\"";
      shown += std::string(name) + "=" + value + " ";
    }
    auto r = test::run_shell(cmd + " -c \"SELECT pg_reload_conf()\"");
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.output);
    return shown;
  }

  /// Events of the monitor since `since` (epoch seconds): when the node on
  /// `port` became primary (0 if it did not).
  double promoted_at(int port, double since) {
    auto c = db::connect(monitor_uri);
    pqxx::nontransaction tx(*c);
    auto r = tx.exec("SELECT extract(epoch FROM min(eventtime)) FROM pgautofailover.event WHERE "
                     "nodeport = " +
                     std::to_string(port) +
                     " AND reportedstate IN ('wait_primary', 'primary') AND eventtime >= "
                     "to_timestamp(" +
                     pqxx::to_string(since) + ")");
    return r[0][0].is_null() ? 0.0 : r[0][0].as<double>();
  }

  std::string monitor_events(double since) {
    try {
      auto c = db::connect(monitor_uri);
      pqxx::nontransaction tx(*c);
      std::string out;
      for (auto row : tx.exec("SELECT to_char(eventtime, 'HH24:MI:SS.MS'), nodeport, "
                              "reportedstate, goalstate, description FROM pgautofailover.event "
                              "WHERE eventtime >= to_timestamp(" +
                              pqxx::to_string(since - 1) + ") ORDER BY eventid"))
        out += std::string(row[0].c_str()) + " " + row[1].c_str() + " " + row[2].c_str() + "/" +
               row[3].c_str() + " " + row[4].c_str() + "\n";
      return out;
    } catch (const std::exception& e) {
      return e.what();
    }
  }

  enum class fault { planned_failover, postmaster_kill, keeper_and_postmaster_kill };
  void lose_the_primary(fault kind, int movements, int fault_after);
};

/// Polls process A's /readyz until stopped, keeping every answer.
struct readyz_watch {
  explicit readyz_watch(int admin_port) : client(admin_port, "", "") {
    thread = std::thread([this] {
      test::request_options unsigned_call;
      unsigned_call.sign = false;
      while (!stop) {
        int status = -1;
        try {
          status = client.get("/readyz", unsigned_call).status;
        } catch (const std::exception&) {
          status = -1; // not answering at all is a failure too
        }
        {
          std::lock_guard<std::mutex> lock(mutex);
          statuses.push_back(status);
          if (status == 503 && (outages.empty() || outages.back().second != 0.0))
            outages.push_back({epoch_now(), 0.0});
          else if (status == 200 && !outages.empty() && outages.back().second == 0.0)
            outages.back().second = epoch_now();
        }
        std::this_thread::sleep_for(100ms);
      }
    });
  }
  ~readyz_watch() { finish(); }
  void finish() {
    stop = true;
    if (thread.joinable())
      thread.join();
  }
  test::api_client client;
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::vector<int> statuses;
  /// [first 503, next 200) of every stretch without a primary, epoch seconds.
  std::vector<std::pair<double, double>> outages;
  std::thread thread;
};

} // namespace

// The fault strikes once `fault_after` of `movements` are created (by four
// clients at once: creation is the long pole on a loaded machine), the rest
// are created while the database is away or after.
void ha_fixture::lose_the_primary(fault kind, int movements, int fault_after) {
  // MG_TEST_HA_DEFAULT_TIMEOUTS=1 keeps pg_auto_failover's defaults, to
  // measure them (the lost primary is then replaced after about a minute).
  const char* defaults = std::getenv("MG_TEST_HA_DEFAULT_TIMEOUTS");
  std::string tuned =
      kind == fault::keeper_and_postmaster_kill && !(defaults && *defaults) ? tune_monitor() : "";
  start_both();
  BOOST_REQUIRE(wait_for("SELECT count(*) = 2 FROM cluster_nodes", 60s));
  const int old_primary = primary_port();
  BOOST_REQUIRE(old_primary != 0);
  const auto [old_dir, old_keeper] = node_of(old_primary);
  readyz_watch readyz(admin_port);

  double fault_at = 0;
  test::shell_result failover;
  std::thread fault_thread;
  const auto started = steady::now();
  std::atomic<int> next{0};
  std::atomic<int> finished{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t)
    clients.emplace_back([&] {
      for (int i = next++; i < movements && !failed; i = next++) {
        try {
          if (!create_and_approve(i))
            failed = true;
        } catch (const std::exception& e) { // not answering at all fails the test too
          std::lock_guard<std::mutex> lock(api_statuses.mutex);
          std::cerr << "pg_failover: movement " << i << ": " << e.what() << std::endl;
          failed = true;
        }
        ++finished;
      }
    });
  while (finished < fault_after && !failed)
    std::this_thread::sleep_for(10ms);
  const pid_t old_postmaster = postmaster_of(old_dir);
  fault_at = epoch_now();
  switch (kind) {
  case fault::planned_failover:
    fault_thread = std::thread([&] { failover = test::run_shell(ctl + " perform failover"); });
    break;
  case fault::postmaster_kill:
    BOOST_REQUIRE(::kill(old_postmaster, SIGKILL) == 0);
    break;
  case fault::keeper_and_postmaster_kill:
    // The whole node at once, as when its host dies: no keeper is left to
    // restart postgres or to tell the monitor anything.
    BOOST_REQUIRE(::kill(-old_keeper, SIGKILL) == 0);
    ::kill(old_postmaster, SIGKILL); // also in the keeper's group: may be gone already
    break;
  }
  for (auto& c : clients)
    c.join();
  BOOST_REQUIRE_MESSAGE(!failed,
                        "the monitor's events since the fault:\n" + monitor_events(fault_at));
  if (fault_thread.joinable())
    fault_thread.join();
  double created_in = std::chrono::duration<double>(steady::now() - started).count();
  if (kind == fault::planned_failover)
    BOOST_REQUIRE_MESSAGE(failover.status == 0, failover.output);

  bool all_done = primary_wait(url,
                               "SELECT count(*) = " + std::to_string(movements) +
                                   " FROM movement_requests WHERE request_state = 'COMPLETED'",
                               120s);
  BOOST_REQUIRE_MESSAGE(all_done,
                        primary_scalar(url, "SELECT string_agg(request_state || ':' || n, ', ') "
                                            "FROM (SELECT request_state, count(*) n FROM "
                                            "movement_requests GROUP BY 1) s") +
                            "\nA: " + server->log() + "\nB: " + second->log());
  double done_at = epoch_now();
  // A killed postmaster is either restarted in place by its keeper or, when
  // the monitor declares it unhealthy first, replaced by its standby.
  const int new_primary = settled_primary_port(60s);
  BOOST_TEST(new_primary != 0);
  if (kind != fault::postmaster_kill)
    BOOST_TEST(new_primary != old_primary);
  const bool failed_over = new_primary != old_primary;

  // One accepted submit per send node: none lost, none doubled.
  BOOST_TEST(primary_scalar(url, "SELECT count(*) FROM movement_request_nodes n WHERE node_key = "
                                 "'send' AND (SELECT count(*) FROM sim_ledger l WHERE l.node_id = "
                                 "n.id AND NOT l.fenced) <> 1") == "0");
  BOOST_TEST(primary_scalar(url, "SELECT count(*) FROM (SELECT node_id, attempt_no FROM sim_ledger "
                                 "GROUP BY 1, 2 HAVING count(*) > 1) d") == "0");
  const std::string retried_nodes = primary_scalar(
      url,
      "SELECT count(*) FROM movement_request_nodes WHERE node_key = 'send' AND attempt_no > 1");

  // Every callback row: written for each callback movement's completion,
  // and delivered.
  const int with_callback = (movements + callback_every - 1) / callback_every;
  BOOST_TEST(primary_scalar(url, "SELECT count(*) FROM movement_requests r WHERE callback_url IS "
                                 "NOT NULL AND EXISTS (SELECT 1 FROM movement_callback_outbox o "
                                 "WHERE o.request_id = r.id AND o.event_type = "
                                 "'request_completed')") == std::to_string(with_callback));
  BOOST_TEST(primary_wait(
      url, "SELECT count(*) = 0 FROM movement_callback_outbox WHERE status <> 'sent'", 90s));
  // v3 deliveries carry the event id in the body.
  std::string delivered;
  for (auto& cb : receiver.received())
    if (cb.answered == 200)
      delivered += cb.body;
  auto sent_ids = primary_scalar(
      url, "SELECT coalesce(string_agg(event_id::text, ','), '') FROM movement_callback_outbox");
  size_t missing = 0, rows = 0;
  for (size_t p = 0; p < sent_ids.size();) {
    auto comma = sent_ids.find(',', p);
    auto id = sent_ids.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
    ++rows;
    missing += delivered.find(id) == std::string::npos ? 1 : 0;
    p = comma == std::string::npos ? sent_ids.size() : comma + 1;
  }
  BOOST_TEST(rows > 0u);
  BOOST_TEST(missing == 0u, missing << " of " << rows << " callback rows never delivered");

  readyz.finish();
  // The first commit on a primary after each stretch without one (on the
  // same clock: everything runs on this host). Not simply after the fault:
  // the backends of a killed postmaster, and a primary being demoted, still
  // commit for a moment. A planned failover counts from the promotion.
  const double promoted = failed_over ? promoted_at(new_primary, fault_at) : 0.0;
  if (failed_over)
    BOOST_TEST(promoted > 0.0);
  auto first_commit_after = [&](double t) {
    return std::stod(primary_scalar(
        url, "SELECT coalesce(extract(epoch FROM min(occurred_at)), 0) FROM movement_events "
             "WHERE occurred_at >= to_timestamp(" +
                 pqxx::to_string(t) + ")"));
  };
  std::string outage_str;
  double first_commit = 0;
  for (auto& [from, to] : readyz.outages) {
    double commit = first_commit_after(from);
    if (first_commit == 0.0)
      first_commit = commit;
    outage_str += "[" + std::to_string(from - fault_at) + " .. " + std::to_string(to - fault_at) +
                  " s: first commit after it at " + std::to_string(commit - fault_at) + " s] ";
  }
  if (readyz.outages.empty()) // a postmaster restarted in place between two polls
    first_commit = first_commit_after(fault_at);
  if (kind == fault::planned_failover)
    first_commit = first_commit_after(promoted);
  BOOST_TEST(first_commit > 0.0);

  std::map<int, int> ready;
  for (int s : readyz.statuses)
    ++ready[s];
  std::string ready_str;
  for (auto& [s, n] : ready)
    ready_str += std::to_string(s) + "x" + std::to_string(n) + " ";
  if (failed_over)
    BOOST_TEST(ready[503] > 0, "/readyz never said 503 while the primary was away: " << ready_str);
  BOOST_TEST(readyz.statuses.back() == 200);
  BOOST_TEST(ready.size() == (ready.count(200) + ready.count(503)), ready_str);
  auto api = api_statuses.str();
  BOOST_TEST(api.find("500x") == std::string::npos, api);

  const char* what = kind == fault::planned_failover ? "planned failover"
                     : kind == fault::postmaster_kill
                         ? (failed_over ? "postmaster SIGKILL (standby promoted)"
                                        : "postmaster SIGKILL (restarted in place)")
                         : "keeper and postmaster SIGKILL (unplanned failover)";
  std::cout << "pg_failover: " << what << ": ";
  if (failed_over)
    std::cout << "fault -> new primary promoted " << (promoted - fault_at) << " s, ";
  std::cout << "fault -> first movegate commit on the primary " << (first_commit - fault_at)
            << " s; /readyz 503 (fault = 0 s) " << outage_str << "; fault -> all " << movements
            << " completed " << (done_at - fault_at) << " s; created in " << created_in
            << " s; send nodes retried " << retried_nodes << "; /readyz " << ready_str << "; API "
            << api;
  if (!tuned.empty())
    std::cout << "; monitor tuned: " << tuned;
  std::cout << std::endl;
  if (kind == fault::postmaster_kill) // which of the two outcomes, and when
    std::cout << "pg_failover: the monitor's events since the fault:\n"
              << monitor_events(fault_at) << std::flush;

  BOOST_TEST(server->running());
  BOOST_TEST(second->running());
  stop(SIGTERM);
  second->signal(SIGTERM);
  BOOST_TEST(second->wait(60s) == 0);
}

BOOST_AUTO_TEST_SUITE(pg_failover)

BOOST_FIXTURE_TEST_CASE(planned_failover_loses_nothing, ha_fixture) {
  lose_the_primary(fault::planned_failover, 300, 100);
}

// Under load the standby is often promoted while the keeper still restarts
// the killed postmaster: both outcomes are checked the same way.
BOOST_FIXTURE_TEST_CASE(postmaster_kill_failover_loses_nothing, ha_fixture) {
  lose_the_primary(fault::postmaster_kill, 40, 15);
}

BOOST_FIXTURE_TEST_CASE(unplanned_failover_loses_nothing, ha_fixture) {
  lose_the_primary(fault::keeper_and_postmaster_kill, 40, 15);
}

BOOST_AUTO_TEST_SUITE_END()
