// Three `movegate serve` processes on one database (SPEC §8, issue 6): work
// spreads over all of them with every node submitted exactly once; a
// SIGKILLed process's stranded work is recovered within the lease (the
// recovery interval and SUBMITTING grace stay at their defaults); and a
// process frozen past its lease (SIGSTOP) is replaced by a survivor, then,
// resumed, changes nothing and stops with exit 1.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "build_paths.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/process.hpp"

using namespace mg;
using namespace std::chrono_literals;

namespace {

const std::vector<std::string> names{"tri-a", "tri-b", "tri-c"};

/// Defaults for everything about leases and recovery (lease 8 s, renew 2 s,
/// recovery interval 60 s, SUBMITTING grace 120 s); `extra` adds to them.
std::map<std::string, std::string> serve_env(const std::string& url, const std::string& node,
                                             const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env{
      {"MG_DATABASE_URL", url}, {"MG_RUNTIME_NODE", node}, {"MG_LOG_LEVEL", "info"}};
  for (auto& [k, v] : extra)
    env[k] = v;
  return env;
}

/// A chain transfer → confirm whose transfer carries `sim` as config.sim.
std::string chain_template(const std::string& key, const std::string& sim) {
  return R"({"template_key": ")" + key + R"(", "version": 1, "nodes": [
    {"node_key": "transfer", "action_type": "chain_transfer", "side_effect": true,
     "config": {"sim": )" +
         sim + R"(}},
    {"node_key": "confirm", "action_type": "step"}],
    "edges": [["transfer", "confirm"]]})";
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct three_fixture : test::db_fixture {
  std::map<std::string, std::unique_ptr<test::child>> procs;

  std::string log_path(const std::string& name) {
    return std::string(MG_BINARY_DIR) + "/e2e-cluster3-" + name + ".log";
  }

  void start_all(const std::string& tag, const std::map<std::string, std::string>& extra = {}) {
    for (auto& n : names)
      procs[n] = std::make_unique<test::child>(std::vector<std::string>{"serve"},
                                               serve_env(url, n, extra), log_path(tag + "-" + n));
    BOOST_REQUIRE_MESSAGE(wait_for("SELECT count(*) = 3 FROM cluster_nodes", 20s), logs());
  }

  std::string logs() {
    std::string all;
    for (auto& [n, p] : procs) {
      auto l = p->log();
      if (l.size() > 6000)
        l = "..." + l.substr(l.size() - 6000);
      all += "---- " + n + " ----\n" + l + "\n";
    }
    return all;
  }

  std::vector<std::string> create_and_approve_many(const std::string& key, int n) {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i)
      ids.push_back(create_and_approve(key));
    return ids;
  }

  /// Nodes without exactly one accepted (non-fenced) sim_ledger row, or
  /// whose accepted row is not their final attempt.
  long nodes_not_submitted_exactly_once() {
    return count("SELECT count(*) FROM movement_request_nodes n WHERE"
                 " (SELECT count(*) FROM sim_ledger l WHERE l.node_id = n.id AND NOT l.fenced) <> 1"
                 " OR NOT EXISTS (SELECT 1 FROM sim_ledger l WHERE l.node_id = n.id"
                 "   AND NOT l.fenced AND l.attempt_no = n.attempt_no)");
  }

  void stop_all_cleanly() {
    for (auto& [n, p] : procs)
      if (p->running())
        p->signal(SIGTERM);
    for (auto& [n, p] : procs)
      if (p->running())
        BOOST_TEST(p->wait(20s) == 0, n << " did not stop cleanly");
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(cluster_three_nodes)

BOOST_FIXTURE_TEST_CASE(three_processes_complete_300_movements_each_node_submitted_once,
                        three_fixture) {
  constexpr int movements = 300;
  add_template(chain_template("spread", R"({"submit_delay_ms": 5})"));
  start_all("spread");
  auto t0 = std::chrono::steady_clock::now();
  create_and_approve_many("spread", movements);
  BOOST_REQUIRE_MESSAGE(wait_for("SELECT count(*) FILTER (WHERE request_state = 'COMPLETED') = " +
                                     std::to_string(movements) + " FROM movement_requests",
                                 60s),
                        scalar("SELECT string_agg(request_state || ':' || c, ',') FROM (SELECT"
                               " request_state, count(*) c FROM movement_requests GROUP BY 1) s") +
                            "\n" + logs());
  double took = seconds_since(t0);
  std::cout << "cluster_three_nodes: " << movements << " movements completed in " << took << " s"
            << std::endl;
  BOOST_TEST_MESSAGE(movements << " movements completed in " << took << " s");

  BOOST_TEST(count("SELECT count(*) FROM movement_request_nodes") == 2 * movements);
  BOOST_TEST(count("SELECT count(*) FROM movement_request_nodes WHERE node_state <> 'COMPLETED'") ==
             0);
  // No double submit: every node has exactly one accepted ledger row, the
  // one of its final attempt; nothing needed recovery here.
  BOOST_TEST(nodes_not_submitted_exactly_once() == 0);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger") == 2 * movements);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE fenced") == 0);
  BOOST_TEST(count("SELECT count(*) FROM movement_request_nodes WHERE attempt_no <> 1") == 0);

  // Work landed on all three processes.
  auto spread = scalar("SELECT string_agg(claimed_by || '=' || c, ', ' ORDER BY claimed_by) FROM"
                       " (SELECT claimed_by, count(*) c FROM movement_request_nodes GROUP BY 1) s");
  std::cout << "cluster_three_nodes: nodes claimed per process: " << spread << std::endl;
  BOOST_TEST_MESSAGE("nodes claimed per process: " << spread);
  for (auto& n : names)
    BOOST_TEST(count("SELECT count(*) FROM movement_request_nodes WHERE claimed_by = '" + n + "'") >
                   0,
               n << " claimed nothing: " << spread);
  BOOST_TEST(count("SELECT count(*) FROM movement_request_nodes WHERE claimed_by IS NULL"
                   " OR claimed_by NOT IN ('tri-a', 'tri-b', 'tri-c')") == 0);
  stop_all_cleanly();
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes") == 0);
}

BOOST_FIXTURE_TEST_CASE(sigkill_mid_run_all_movements_complete_and_recovery_is_fast,
                        three_fixture) {
  constexpr int movements = 150;
  add_template(chain_template("busy", R"({"submit_delay_ms": 300})"));
  // Two dispatchers each, so every process has transfers in flight.
  start_all("kill", {{"MG_NODE_DISPATCHERS", "2"}});
  create_and_approve_many("busy", movements);
  BOOST_REQUIRE_MESSAGE(
      wait_for("SELECT count(*) >= 15 FROM movement_requests WHERE request_state = 'COMPLETED'",
               30s),
      logs());
  // The victim: a process that claimed a transfer within the last 100 ms,
  // so it is still inside the 300 ms submit delay (in SUBMITTING) when the
  // kill lands.
  std::string victim;
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (victim.empty() && std::chrono::steady_clock::now() < deadline) {
    victim = scalar("SELECT claimed_by FROM movement_request_nodes WHERE node_state = 'SUBMITTING'"
                    " AND node_key = 'transfer'"
                    " AND claimed_at > clock_timestamp() - interval '100 milliseconds'"
                    " ORDER BY claimed_at DESC LIMIT 1");
    if (victim.empty())
      std::this_thread::sleep_for(5ms);
  }
  BOOST_REQUIRE(procs.count(victim) == 1);
  procs[victim]->signal(SIGKILL);
  auto killed_at = std::chrono::steady_clock::now();
  auto killed_db = scalar("SELECT clock_timestamp()::text");
  BOOST_TEST(procs[victim]->wait(5s) == 128 + SIGKILL);
  // What the victim left behind (nobody else touches its claims until its
  // lease has expired, at least 6 s from now).
  long stranded = count("SELECT count(*) FROM movement_request_nodes WHERE claimed_by = '" +
                        victim + "' AND node_state = 'SUBMITTING'");
  long stranded_observing =
      count("SELECT count(*) FROM movement_request_nodes WHERE claimed_by = '" + victim +
            "' AND node_state IN ('SUBMITTED', 'OBSERVING')");
  BOOST_TEST_MESSAGE("victim " << victim << " left " << stranded << " SUBMITTING and "
                               << stranded_observing << " SUBMITTED/OBSERVING nodes");
  BOOST_REQUIRE(stranded >= 1);

  // The first recovery action on the stranded work: a survivor's lease
  // worker moves it to UNKNOWN (RUNTIME_NODE_LOST) and drops the dead row.
  BOOST_REQUIRE_MESSAGE(
      wait_for("SELECT count(*) = 0 FROM cluster_nodes WHERE runtime_node = '" + victim + "'", 30s),
      logs());
  double row_gone = seconds_since(killed_at);
  auto lost_after =
      scalar("SELECT extract(epoch FROM min(occurred_at) - '" + killed_db +
             "'::timestamptz) FROM movement_events WHERE payload->'data'->>'error_code' ="
             " 'RUNTIME_NODE_LOST'");
  BOOST_REQUIRE(!lost_after.empty());
  double kill_to_recovery = std::stod(lost_after);
  BOOST_TEST(count("SELECT count(*) FROM movement_events WHERE"
                   " payload->'data'->>'error_code' = 'RUNTIME_NODE_LOST'") == stranded);

  BOOST_REQUIRE_MESSAGE(wait_for("SELECT count(*) FILTER (WHERE request_state = 'COMPLETED') = " +
                                     std::to_string(movements) + " FROM movement_requests",
                                 60s),
                        scalar("SELECT string_agg(request_state || ':' || c, ',') FROM (SELECT"
                               " request_state, count(*) c FROM movement_requests GROUP BY 1) s") +
                            "\n" + logs());
  // node_recovery's answer on the stranded attempts (found, or fenced when
  // the kill came before the provider recorded the submit): woken by the
  // take-over, it acts at once, not after its 60 s interval.
  auto recovered_after = scalar("SELECT extract(epoch FROM min(created_at) - '" + killed_db +
                                "'::timestamptz) FROM node_artifacts WHERE kind = 'recover_proof'");
  BOOST_REQUIRE(!recovered_after.empty());
  double kill_to_recovered = std::stod(recovered_after);
  std::cout << "cluster_three_nodes: SIGKILL -> RUNTIME_NODE_LOST take-over in " << kill_to_recovery
            << " s (dead row gone seen after " << row_gone << " s); -> first node_recovery result "
            << kill_to_recovered << " s" << std::endl;
  BOOST_TEST_MESSAGE("SIGKILL -> first recovery action (RUNTIME_NODE_LOST) "
                     << kill_to_recovery << " s; -> first node_recovery result "
                     << kill_to_recovered << " s");
  BOOST_TEST(kill_to_recovery < 10.0);
  BOOST_TEST(kill_to_recovered - kill_to_recovery < 2.0);
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts WHERE kind = 'recover_proof'") == stranded);

  BOOST_TEST(count("SELECT count(*) FROM movement_request_nodes WHERE node_state <> 'COMPLETED'") ==
             0);
  BOOST_TEST(nodes_not_submitted_exactly_once() == 0);
  // Every fenced row is an attempt that was superseded by a later one.
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger l JOIN movement_request_nodes n ON n.id ="
                   " l.node_id WHERE l.fenced AND l.attempt_no >= n.attempt_no") == 0);
  BOOST_TEST(count("SELECT count(*) FROM sim_ledger WHERE fenced") <= stranded);
  procs.erase(victim);
  stop_all_cleanly();
}

// clang-format off
BOOST_FIXTURE_TEST_CASE(sigstop_process_whose_lease_expires_is_recovered_and_its_late_results_change_nothing,
                        three_fixture) {
  // clang-format on
  add_template(chain_template("held", R"({"submit_hold_ms": 2000})"));
  start_all("stop");
  auto id = create_and_approve("held");
  const std::string transfer =
      "(SELECT id FROM movement_request_nodes WHERE node_key = 'transfer')";
  const std::string node_where = " FROM movement_request_nodes WHERE id = " + transfer;
  // The provider has accepted attempt 1; the claimer now holds the answer
  // for 2 s before its result commit. Freeze it there.
  BOOST_REQUIRE_MESSAGE(
      wait_for("SELECT count(*) = 1 FROM sim_ledger WHERE node_id = " + transfer, 15s), logs());
  auto frozen = scalar("SELECT claimed_by" + node_where);
  BOOST_REQUIRE(procs.count(frozen) == 1);
  BOOST_REQUIRE(procs[frozen]->freeze());
  auto stopped_at = std::chrono::steady_clock::now();
  BOOST_REQUIRE(scalar("SELECT node_state" + node_where) == "SUBMITTING");
  auto frozen_token = scalar("SELECT claim_token" + node_where);

  // A survivor takes the frozen process's row once its lease expired.
  BOOST_REQUIRE_MESSAGE(wait_for("SELECT count(*) = 1 FROM movement_events WHERE request_id = '" +
                                     id +
                                     "' AND payload->'data'->>'error_code' ="
                                     " 'RUNTIME_NODE_LOST'",
                                 30s),
                        logs());
  BOOST_TEST_MESSAGE("SIGSTOP -> RUNTIME_NODE_LOST after " << seconds_since(stopped_at) << " s");
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes WHERE runtime_node = '" + frozen + "'") ==
             0);
  BOOST_REQUIRE_MESSAGE(
      wait_for("SELECT request_state = 'COMPLETED' FROM movement_requests WHERE id = '" + id + "'",
               30s),
      logs());
  BOOST_TEST(procs[frozen]->running()); // still frozen, not dead

  // What the survivors decided: recovery found attempt 1 in the ledger.
  auto final_row = scalar("SELECT concat_ws('|', node_state, attempt_no, claim_token, "
                          "provider_ref_id, updated_at)" +
                          node_where);
  auto final_token = scalar("SELECT claim_token" + node_where);
  BOOST_TEST(final_token != frozen_token);
  BOOST_TEST(scalar("SELECT node_state" + node_where) == "COMPLETED");
  BOOST_TEST(scalar("SELECT attempt_no" + node_where) == "1");
  BOOST_TEST(scalar("SELECT claimed_by IS NULL OR claimed_by <> '" + frozen + "'" + node_where) ==
             "t");
  auto ledger = scalar("SELECT string_agg(attempt_no || ':' || fenced, ',' ORDER BY attempt_no)"
                       " FROM sim_ledger WHERE node_id = " +
                       transfer);
  BOOST_TEST(ledger == "1:false");
  auto nodes_before = scalar("SELECT string_agg(concat_ws('|', node_key, node_state, attempt_no,"
                             " claim_token, updated_at), ',' ORDER BY node_key)"
                             " FROM movement_request_nodes");
  auto request_before = scalar("SELECT concat_ws('|', request_state, updated_at, needs_reconcile)"
                               " FROM movement_requests WHERE id = '" +
                               id + "'");
  auto events_before = scalar("SELECT count(*) || ':' || max(seq) FROM movement_events");
  auto artifacts_before = count("SELECT count(*) FROM node_artifacts");
  auto ledger_before = scalar("SELECT string_agg(idempotency_key || ':' || fenced, ',' ORDER BY"
                              " idempotency_key) FROM sim_ledger");

  // Resume: the frozen dispatcher finishes its hold and tries its result
  // commit with the old claim token; its lease worker finds its row gone.
  auto resumed_db = scalar("SELECT clock_timestamp()::text");
  procs[frozen]->signal(SIGCONT);
  int code = procs[frozen]->wait(20s);
  auto frozen_log = procs[frozen]->log();
  BOOST_TEST(code == 1, "resumed process exit code " << code << "\n" << frozen_log);
  BOOST_TEST(frozen_log.find("cluster lease lost") != std::string::npos);
  BOOST_TEST(frozen_log.find("stale node result dropped") != std::string::npos, frozen_log);

  // Nothing changed: node rows, request, events, artifacts, ledger.
  BOOST_TEST(scalar("SELECT concat_ws('|', node_state, attempt_no, claim_token, "
                    "provider_ref_id, updated_at)" +
                    node_where) == final_row);
  BOOST_TEST(scalar("SELECT string_agg(concat_ws('|', node_key, node_state, attempt_no,"
                    " claim_token, updated_at), ',' ORDER BY node_key)"
                    " FROM movement_request_nodes") == nodes_before);
  BOOST_TEST(scalar("SELECT concat_ws('|', request_state, updated_at, needs_reconcile)"
                    " FROM movement_requests WHERE id = '" +
                    id + "'") == request_before);
  BOOST_TEST(scalar("SELECT count(*) || ':' || max(seq) FROM movement_events") == events_before);
  BOOST_TEST(
      count("SELECT count(*) FROM movement_events WHERE occurred_at >= '" + resumed_db + "'") == 0);
  BOOST_TEST(count("SELECT count(*) FROM node_artifacts") == artifacts_before);
  BOOST_TEST(scalar("SELECT string_agg(idempotency_key || ':' || fenced, ',' ORDER BY"
                    " idempotency_key) FROM sim_ledger") == ledger_before);
  // It did not re-register, and the survivors are undisturbed.
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes WHERE runtime_node = '" + frozen + "'") ==
             0);
  BOOST_TEST(count("SELECT count(*) FROM cluster_nodes") == 2);
  procs.erase(frozen);
  stop_all_cleanly();
}

BOOST_AUTO_TEST_SUITE_END()
