// Two `movegate serve` processes ride a PostgreSQL primary failover with
// nothing lost (runs under scripts/with-pg-ha.sh: a pg_auto_failover monitor,
// primary and synchronous secondary; MG_DATABASE_URL names both nodes with
// target_session_attrs=read-write). 300 chain movements, some with
// callbacks, are created through the API while `pg_autoctl perform failover`
// runs: every movement completes, each send node has exactly one accepted
// submit, every callback row is delivered, /readyz answers 503 while no
// primary is reachable and 200 after, and the API never answers 500.
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
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
constexpr int movements = 300;
constexpr int fault_after = 100;     // movements created before the failover starts
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

  int primary_port() {
    auto c = db::connect(monitor_uri);
    pqxx::nontransaction tx(*c);
    auto r = tx.exec("SELECT nodeport FROM pgautofailover.node WHERE reportedstate = 'primary'"
                     " AND goalstate = 'primary'");
    return r.size() == 1 ? r[0][0].as<int>() : 0;
  }
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
  std::thread thread;
};

} // namespace

BOOST_AUTO_TEST_SUITE(pg_failover)

BOOST_FIXTURE_TEST_CASE(planned_failover_loses_nothing, ha_fixture) {
  start_both();
  BOOST_REQUIRE(wait_for("SELECT count(*) = 2 FROM cluster_nodes", 60s));
  const int old_primary = primary_port();
  BOOST_REQUIRE(old_primary != 0);
  readyz_watch readyz(admin_port);

  double fault_at = 0;
  test::shell_result failover;
  std::thread fault;
  const auto started = steady::now();
  // Four clients at once (creation is the test's long pole on a loaded
  // machine); the failover starts once the first `fault_after` are in.
  std::atomic<int> next{0};
  std::atomic<int> finished{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t)
    clients.emplace_back([&] {
      for (int i = next++; i < movements && !failed; i = next++) {
        if (!create_and_approve(i))
          failed = true;
        ++finished;
      }
    });
  while (finished < fault_after && !failed)
    std::this_thread::sleep_for(10ms);
  fault_at = epoch_now();
  fault = std::thread([&] { failover = test::run_shell(ctl + " perform failover"); });
  for (auto& c : clients)
    c.join();
  BOOST_REQUIRE(!failed);
  fault.join();
  double created_in = std::chrono::duration<double>(steady::now() - started).count();
  BOOST_REQUIRE_MESSAGE(failover.status == 0, failover.output);
  const int new_primary = primary_port();
  BOOST_TEST(new_primary != 0);
  BOOST_TEST(new_primary != old_primary);

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

  // The first commit on the new primary, and when it was promoted (the
  // monitor's event log, on the same clock).
  auto promoted = [&] {
    auto c = db::connect(monitor_uri);
    pqxx::nontransaction tx(*c);
    auto r = tx.exec("SELECT extract(epoch FROM min(eventtime)) FROM pgautofailover.event WHERE "
                     "nodeport = " +
                     std::to_string(new_primary) +
                     " AND reportedstate IN ('wait_primary', 'primary') AND eventtime >= "
                     "to_timestamp(" +
                     pqxx::to_string(fault_at) + ")");
    return r[0][0].is_null() ? 0.0 : r[0][0].as<double>();
  }();
  BOOST_TEST(promoted > 0.0);
  auto first_commit = std::stod(primary_scalar(
      url, "SELECT coalesce(extract(epoch FROM min(occurred_at)), 0) FROM movement_events WHERE "
           "occurred_at >= to_timestamp(" +
               pqxx::to_string(promoted) + ")"));
  BOOST_TEST(first_commit > 0.0);

  readyz.finish();
  std::map<int, int> ready;
  for (int s : readyz.statuses)
    ++ready[s];
  std::string ready_str;
  for (auto& [s, n] : ready)
    ready_str += std::to_string(s) + "x" + std::to_string(n) + " ";
  BOOST_TEST(ready[503] > 0, "/readyz never said 503 during the failover: " << ready_str);
  BOOST_TEST(readyz.statuses.back() == 200);
  BOOST_TEST(ready.size() == (ready.count(200) + ready.count(503)), ready_str);
  auto api = api_statuses.str();
  BOOST_TEST(api.find("500x") == std::string::npos, api);

  std::cout << "pg_failover: planned failover: fault -> new primary promoted "
            << (promoted - fault_at) << " s, fault -> first movegate commit on it "
            << (first_commit - fault_at) << " s, fault -> all " << movements << " completed "
            << (done_at - fault_at) << " s; created in " << created_in << " s; send nodes retried "
            << retried_nodes << "; /readyz " << ready_str << "; API " << api << std::endl;

  BOOST_TEST(server->running());
  BOOST_TEST(second->running());
  stop(SIGTERM);
  second->signal(SIGTERM);
  BOOST_TEST(second->wait(60s) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
