// The node claims' plans on statistics that lag a burst: right after a
// batch of approvals PostgreSQL still believes no node is READY and no
// request APPROVED, and a claim whose WHERE names those states is planned
// as a walk over every active request per row (tens of milliseconds per
// claim at a few thousand movements). The claims must probe primary keys
// whatever the statistics say.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "persistence/connection_slot.hpp"
#include "persistence/db.hpp"
#include "persistence/node_store.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/db_helpers.hpp"

using namespace mg;
using namespace mg::test;

namespace {

const char* pair_template = R"({"template_key": "pair", "version": 1, "nodes": [
  {"node_key": "a", "action_type": "chain_transfer", "executor_key": "sim"},
  {"node_key": "b", "action_type": "chain_transfer", "executor_key": "sim"}],
  "edges": [["a", "b"]]})";

constexpr int burst = 300;

/// `burst` requests approved after the last ANALYZE: the statistics say
/// nothing is READY or APPROVED.
struct stale_statistics_fixture : db_fixture {
  std::vector<std::string> requests;
  stale_statistics_fixture() {
    add_template(pair_template);
    for (int i = 0; i < burst; ++i)
      requests.push_back(create("pair"));
    exec("ANALYZE movement_requests, movement_request_nodes");
    for (auto& id : requests)
      approve(id);
  }

  /// Index scans `tx` made on the state partial indexes so far.
  long state_index_scans(pqxx::transaction_base& tx, const std::string& index) {
    return tx.exec1("SELECT pg_stat_get_xact_numscans(" + tx.quote(index) + "::regclass)")[0]
        .as<long>();
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(node_store_claim_plan)

BOOST_FIXTURE_TEST_CASE(a_dispatch_claim_probes_primary_keys_on_stale_statistics,
                        stale_statistics_fixture) {
  auto last = node_id(*this, requests.back());
  auto c = db::connect(url, db::plan_choice::generic);
  pqxx::work tx(*c);
  auto hit = db::claim_for_dispatch(tx, last, "devnet", db::claim_scope::first_in_transaction);
  BOOST_REQUIRE(hit.has_value());
  BOOST_TEST(hit->id == last);
  BOOST_TEST(state_index_scans(tx, "nodes_dispatch_ready") == 0);
  BOOST_TEST(state_index_scans(tx, "movement_requests_active") == 0);
}

BOOST_FIXTURE_TEST_CASE(a_dispatch_claim_of_a_row_no_longer_claimable_misses,
                        stale_statistics_fixture) {
  auto paused = node_id(*this, requests.front());
  exec("UPDATE movement_requests SET dispatch_paused = true WHERE id = '" + requests.front() + "'");
  auto c = db::connect(url, db::plan_choice::generic);
  pqxx::work tx(*c);
  BOOST_TEST(!db::claim_for_dispatch(tx, paused, "devnet").has_value());
  BOOST_TEST(!db::claim_for_dispatch(tx, paused, "testnet").has_value());
  // The savepoint miss released its lock: another transaction takes it.
  BOOST_TEST(lock_is_free(url, "SELECT 1 FROM movement_request_nodes WHERE id = '" + paused +
                                   "' FOR UPDATE NOWAIT"));
}

BOOST_FIXTURE_TEST_CASE(a_batch_dispatch_claim_probes_keys_skips_busy_rows_and_keeps_claimable_ones,
                        stale_statistics_fixture) {
  // Six listed candidates, newest first: one request is paused, one is
  // held by another transaction (an approval, a reconcile); the others are
  // claimed in FIFO order without waiting.
  std::vector<std::string> listed;
  for (int i = 5; i >= 0; --i)
    listed.push_back(node_id(*this, requests[static_cast<size_t>(i) * 50]));
  exec("UPDATE movement_requests SET dispatch_paused = true WHERE id = '" + requests[50] + "'");
  auto holder = db::connect(url);
  pqxx::work held(*holder);
  held.exec("SELECT 1 FROM movement_requests WHERE id = '" + requests[100] + "' FOR UPDATE");
  auto c = db::connect(url, db::plan_choice::generic);
  pqxx::work tx(*c);
  std::vector<std::string> got;
  for (auto& n : db::claim_for_dispatch_batch(tx, listed, "devnet"))
    got.push_back(n.request_id);
  std::vector<std::string> expected{requests[0], requests[150], requests[200], requests[250]};
  BOOST_TEST(got == expected, boost::test_tools::per_element());
  BOOST_TEST(state_index_scans(tx, "nodes_dispatch_ready") == 0);
  BOOST_TEST(state_index_scans(tx, "movement_requests_active") == 0);
  BOOST_TEST(db::claim_for_dispatch_batch(tx, {}, "devnet").empty());
}

BOOST_FIXTURE_TEST_CASE(the_candidate_list_probes_requests_by_key_on_stale_statistics,
                        stale_statistics_fixture) {
  auto c = db::connect(url, db::plan_choice::generic);
  pqxx::work tx(*c);
  auto ids = db::dispatch_candidates(tx, "devnet", {}, 8);
  BOOST_TEST(ids.size() == 8u);
  BOOST_TEST(ids.front() == node_id(*this, requests.front()));
  BOOST_TEST(state_index_scans(tx, "movement_requests_active") == 0);
}

BOOST_FIXTURE_TEST_CASE(a_chain_claim_probes_keys_and_keeps_only_claimable_successors,
                        stale_statistics_fixture) {
  // Five successors activated as a reconcile leaves them for the chain
  // claim (still BLOCKED in their rows), one of them on a paused request;
  // a sixth that moved on already.
  std::vector<db::activated_node> activated;
  for (int i = 0; i < 6; ++i) {
    auto& id = requests[static_cast<size_t>(i) * 40];
    exec("UPDATE movement_request_nodes SET node_state = CASE node_key WHEN 'a' THEN"
         " 'COMPLETED' ELSE '" +
         std::string(i < 5 ? "BLOCKED" : "READY") + "' END WHERE request_id = '" + id + "'");
    activated.push_back({id, "b"});
  }
  exec("UPDATE movement_requests SET dispatch_paused = true WHERE id = '" + requests[40] + "'");
  auto c = db::connect(url, db::plan_choice::generic);
  pqxx::work tx(*c);
  auto claimed = db::claim_activated(tx, activated, "devnet");
  std::vector<std::string> got;
  for (auto& n : claimed)
    got.push_back(n.request_id);
  std::vector<std::string> expected{requests[0], requests[80], requests[120], requests[160]};
  BOOST_TEST(got == expected, boost::test_tools::per_element());
  BOOST_TEST(state_index_scans(tx, "nodes_dispatch_ready") == 0);
  BOOST_TEST(state_index_scans(tx, "movement_requests_active") == 0);
}

BOOST_FIXTURE_TEST_CASE(the_observer_probes_requests_by_key_on_stale_statistics,
                        stale_statistics_fixture) {
  // Every first node submitted since the statistics were taken.
  exec("UPDATE movement_requests SET request_state = 'EXECUTING'");
  exec("UPDATE movement_request_nodes SET node_state = 'SUBMITTED', attempt_no = 1,"
       " next_observe_at = now() - interval '1 second'"
       " WHERE node_key = 'a'");
  auto c = db::connect(url, db::plan_choice::generic);
  pqxx::work tx(*c);
  auto ids = db::observe_candidates(tx, "devnet", 8);
  BOOST_REQUIRE(ids.size() == 8u);
  BOOST_TEST(db::next_observe_due_in(tx, "devnet").value_or(-1) == 0.0);
  BOOST_TEST(state_index_scans(tx, "movement_requests_active") == 0);
  auto hit = db::claim_for_observe(tx, ids.back(), "devnet");
  BOOST_REQUIRE(hit.has_value());
  BOOST_TEST(hit->id == ids.back());
  BOOST_TEST(state_index_scans(tx, "nodes_observe_due") == 0);
  BOOST_TEST(state_index_scans(tx, "movement_requests_active") == 0);
}

BOOST_FIXTURE_TEST_CASE(an_engine_slot_plans_generically_and_others_as_postgresql_chooses,
                        db_fixture) {
  auto plan_cache_mode = [](pqxx::connection& c) {
    pqxx::nontransaction tx(c);
    return tx.exec1("SHOW plan_cache_mode")[0].as<std::string>();
  };
  db::connection_slot engine(url, db::plan_choice::generic);
  BOOST_TEST(plan_cache_mode(engine.get()) == "force_generic_plan");
  // A reconnect keeps the choice.
  engine.reset();
  BOOST_TEST(plan_cache_mode(engine.get()) == "force_generic_plan");
  db::connection_slot other(url);
  BOOST_TEST(plan_cache_mode(other.get()) == "auto");
}

BOOST_AUTO_TEST_SUITE_END()
