// EVM nonce reservations on the real database: concurrent reservers never
// share a nonce and leave no gap, a repeated prepare keeps its nonce, a
// stale reservation whose node never reached SUBMITTING is reclaimed exactly
// once (two reapers) and reused first, a reclaimed attempt can never store
// signed bytes, and the reaper releases a broadcast nonce only once the chain
// shows it used.
#include <boost/test/unit_test.hpp>

#include <mutex>
#include <set>
#include <thread>

#include "actors/workers/evm_nonce_reaper.hpp"
#include "actors/workers/worker_table.hpp"
#include "domain/evm_tx.hpp"
#include "persistence/evm_nonce_store.hpp"
#include "tests/support/db_fixture.hpp"
#include "tests/support/ganache.hpp"

using namespace mg;
using namespace mg::test;

namespace {

const db::evm_sender sender{1337, "0x90f8bf6a479f320ead074411a4b0e7944ea8c9c1"};

db::nonce_owner owner(int i, int attempt = 1) {
  char uuid[40];
  std::snprintf(uuid, sizeof uuid, "00000000-0000-4000-8000-%012d", i);
  return {std::string(uuid) + ":" + std::to_string(attempt), uuid, attempt};
}

std::string key_of(int i, int attempt = 1) {
  return owner(i, attempt).idempotency_key;
}

} // namespace

BOOST_AUTO_TEST_SUITE(evm_nonce)

BOOST_FIXTURE_TEST_CASE(eight_concurrent_reservers_get_distinct_gapless_nonces, db_fixture) {
  constexpr int reservers = 8;
  constexpr int each = 10;
  std::mutex m;
  std::vector<std::uint64_t> got;
  std::vector<std::thread> threads;
  for (int t = 0; t < reservers; ++t)
    threads.emplace_back([&, t] {
      pqxx::connection c(url);
      for (int i = 0; i < each; ++i) {
        auto n = db::reserve_nonce(c, sender, owner(t * 100 + i), 0, 0);
        std::lock_guard<std::mutex> lock(m);
        got.push_back(n);
      }
    });
  for (auto& t : threads)
    t.join();
  std::set<std::uint64_t> distinct(got.begin(), got.end());
  BOOST_TEST(got.size() == static_cast<size_t>(reservers * each));
  BOOST_TEST(distinct.size() == got.size());
  BOOST_TEST(*distinct.begin() == 0u);
  BOOST_TEST(*distinct.rbegin() == static_cast<std::uint64_t>(reservers * each - 1));
}

BOOST_FIXTURE_TEST_CASE(a_repeated_prepare_keeps_its_nonce_and_the_chain_sets_the_floor,
                        db_fixture) {
  pqxx::connection c(url);
  // The chain already has 5 mined and 7 pending transactions of this sender.
  BOOST_TEST(db::reserve_nonce(c, sender, owner(1), 5, 7) == 7u);
  BOOST_TEST(db::reserve_nonce(c, sender, owner(1), 5, 7) == 7u);
  BOOST_TEST(db::reserve_nonce(c, sender, owner(2), 5, 7) == 8u);
  // Another chain and another sender count on their own.
  BOOST_TEST(db::reserve_nonce(c, {1, sender.address}, owner(3), 0, 0) == 0u);
  BOOST_TEST(db::reserve_nonce(c, {1337, "0xffcf8fdee72ac11b5c542428b35eef5769c409f0"}, owner(4), 0,
                               0) == 0u);
}

BOOST_FIXTURE_TEST_CASE(a_stale_reservation_is_reclaimed_exactly_once_and_reused_first,
                        db_fixture) {
  pqxx::connection c(url);
  for (int i = 0; i < 3; ++i)
    db::reserve_nonce(c, sender, owner(i), 0, 0);
  // Nonce 1's preparer died long ago; 0 and 2 are recent.
  exec("UPDATE evm_nonce_reservation SET reserved_at = now() - interval '1 hour' WHERE nonce = 1");
  std::atomic<int> freed{0};
  std::thread a([&] {
    pqxx::connection c1(url);
    freed += db::reclaim_stale_reservations(c1, 300, 100);
  });
  std::thread b([&] {
    pqxx::connection c2(url);
    freed += db::reclaim_stale_reservations(c2, 300, 100);
  });
  a.join();
  b.join();
  BOOST_TEST(freed.load() == 1);
  BOOST_TEST(scalar("SELECT state FROM evm_nonce_reservation WHERE nonce = 1") == "reclaimed");
  BOOST_TEST(scalar("SELECT count(*) FROM evm_nonce_reservation WHERE state = 'reserved'") == "2");
  // The dead attempt can never sign into its old nonce now.
  BOOST_CHECK(db::store_signed(c, sender, owner(1), 1, "raw", "hash") ==
              db::store_outcome::refused);
  // The next reservation fills the gap instead of making the queue longer.
  BOOST_TEST(db::reserve_nonce(c, sender, owner(10), 0, 3) == 1u);
  BOOST_TEST(db::reserve_nonce(c, sender, owner(11), 0, 3) == 3u);
}

BOOST_FIXTURE_TEST_CASE(a_reservation_whose_node_reached_submitting_is_not_reclaimed, db_fixture) {
  add_template(R"({"template_key": "t", "version": 1, "nodes": [
    {"node_key": "a", "action_type": "step"}], "edges": []})");
  auto id = create_and_approve("t");
  auto node = scalar("SELECT id FROM movement_request_nodes WHERE request_id = '" + id + "'");
  exec("UPDATE movement_request_nodes SET attempt_no = 1 WHERE id = '" + node + "'");
  pqxx::connection c(url);
  db::reserve_nonce(c, sender, {node + ":1", node, 1}, 0, 0);
  exec("UPDATE evm_nonce_reservation SET reserved_at = now() - interval '1 hour'");
  BOOST_TEST(db::reclaim_stale_reservations(c, 300, 100) == 0);
  // Its attempt 2 never committed SUBMITTING: that one is reclaimable.
  db::reserve_nonce(c, sender, {node + ":2", node, 2}, 0, 0);
  exec("UPDATE evm_nonce_reservation SET reserved_at = now() - interval '1 hour'");
  BOOST_TEST(db::reclaim_stale_reservations(c, 300, 100) == 1);
  BOOST_TEST(scalar("SELECT string_agg(nonce || ':' || state, ',' ORDER BY nonce) FROM "
                    "evm_nonce_reservation") == "0:reserved,1:reclaimed");
}

BOOST_FIXTURE_TEST_CASE(signed_bytes_are_stored_once_and_a_fenced_key_refuses_them, db_fixture) {
  pqxx::connection c(url);
  auto n = db::reserve_nonce(c, sender, owner(1), 0, 0);
  BOOST_CHECK(db::store_signed(c, sender, owner(1), n, "raw-bytes", "h1") ==
              db::store_outcome::stored);
  BOOST_CHECK(db::store_signed(c, sender, owner(1), n, "raw-bytes", "h1") ==
              db::store_outcome::already_stored);
  BOOST_CHECK(db::store_signed(c, sender, owner(1), n, "other", "h2") ==
              db::store_outcome::refused);
  auto attempt = db::find_attempt(c, key_of(1));
  BOOST_REQUIRE(attempt);
  BOOST_TEST(attempt->raw == "raw-bytes");
  BOOST_TEST(scalar("SELECT state FROM evm_nonce_reservation") == "broadcast");
  // Fencing an attempt with stored bytes fences nothing: they may be mined.
  bool had_bytes = false;
  BOOST_TEST(!db::fence_attempt(c, owner(1), had_bytes));
  BOOST_TEST(had_bytes);
  // An attempt without bytes is fenced, and then can never store any.
  auto m = db::reserve_nonce(c, sender, owner(2), 0, 0);
  auto held = db::fence_attempt(c, owner(2), had_bytes);
  BOOST_TEST(!had_bytes);
  BOOST_REQUIRE(held);
  BOOST_TEST(held->nonce == m);
  BOOST_CHECK(db::store_signed(c, sender, owner(2), m, "late", "h3") == db::store_outcome::refused);
  BOOST_TEST(db::find_attempt(c, key_of(2))->status == "fenced");
}

BOOST_FIXTURE_TEST_CASE(evm_nonce_reaper_releases_a_broadcast_nonce_once_the_chain_used_it,
                        db_fixture) {
  ganache_chain chain;
  std::map<std::uint64_t, executors::evm_rpc> chains;
  chains.emplace(ganache_chain_id, chain.rpc());
  pqxx::connection c(url);
  auto n = db::reserve_nonce(c, sender, owner(1), 0, 0);
  db::store_signed(c, sender, owner(1), n, "raw", "h");
  workers::nonce_reaper_counts counts;
  workers::evm_nonce_reaper_pass(conn, chains, 300, &counts);
  BOOST_TEST(counts.consumed == 0); // the chain has not used nonce 0 yet
  BOOST_TEST(scalar("SELECT state FROM evm_nonce_reservation") == "broadcast");
  // Account 0 sends one transaction (ganache signs for its own accounts).
  chain.rpc().call("eth_sendTransaction",
                   R"([{"from": "0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1",)"
                   R"( "to": "0xFFcf8FDEE72ac11b5c542428B35EEF5769C409f0", "value": "0x1"}])");
  workers::evm_nonce_reaper_pass(conn, chains, 300, &counts);
  BOOST_TEST(counts.consumed == 1);
  BOOST_TEST(scalar("SELECT state FROM evm_nonce_reservation") == "consumed");
}

BOOST_FIXTURE_TEST_CASE(evm_nonce_reaper_is_core_runs_on_its_flag_and_needs_endpoints, db_fixture) {
  auto with = [&](bool enabled, const std::string& urls) {
    auto s = settings;
    s.evm_nonce_reaper_enabled = enabled;
    s.evm_rpc_urls = urls;
    auto ctx = std::make_shared<workers::engine_context>(s, domain::provider_registry{});
    return actors::make_worker("evm_nonce_reaper", ctx);
  };
  BOOST_TEST(!with(false, "1337=http://127.0.0.1:1"));
  BOOST_TEST(!with(true, "")); // skipped: no client, one warning
  auto spec = with(true, "1337=http://127.0.0.1:1");
  BOOST_REQUIRE(spec);
  BOOST_TEST(spec->name == "evm_nonce_reaper");
  BOOST_CHECK(spec->group == actors::worker_group::core);
  BOOST_TEST(spec->policy.interval_seconds == 60.0);
}

BOOST_AUTO_TEST_SUITE_END()
