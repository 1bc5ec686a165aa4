// services/nonce_service: api_nonces on the API pool, the replay check of
// signed /v3 calls and cluster logins — fresh once, a replay after, a prune
// asked for only after a new nonce, and a lost database thrown to the door.
#include <boost/test/unit_test.hpp>

#include "services/nonce_service.hpp"
#include "tests/support/db_fixture.hpp"

using namespace mg;

namespace {

struct nonce_fixture : test::db_fixture {
  db::connection_pool pool{url, 1};
  int asked = 0;
  bool prune = false;
  std::function<bool()> prune_due = [this] {
    ++asked;
    return prune;
  };
};

} // namespace

BOOST_AUTO_TEST_SUITE(nonce_service)

BOOST_FIXTURE_TEST_CASE(a_nonce_is_fresh_once_then_a_replay, nonce_fixture) {
  BOOST_TEST(services::remember_nonce(pool, "k1", "nonce-aaaaaaaaaaaa", prune_due));
  BOOST_TEST(!services::remember_nonce(pool, "k1", "nonce-aaaaaaaaaaaa", prune_due));
  // The pair is the key: another key may use the same nonce.
  BOOST_TEST(services::remember_nonce(pool, "k2", "nonce-aaaaaaaaaaaa", prune_due));
  BOOST_TEST(asked == 2); // only after the fresh ones
  BOOST_TEST(count("SELECT count(*) FROM api_nonces") == 2);
}

BOOST_FIXTURE_TEST_CASE(a_due_prune_deletes_only_nonces_past_their_keep_time, nonce_fixture) {
  exec("INSERT INTO api_nonces (key_id, nonce, seen_at) VALUES"
       " ('k1', 'old-nonce-aaaaaaaaa', now() - interval '1 day'),"
       " ('k1', 'recent-nonce-aaaaaa', now() - interval '60 seconds')");
  BOOST_TEST(services::remember_nonce(pool, "k1", "nonce-bbbbbbbbbbbb", prune_due));
  BOOST_TEST(count("SELECT count(*) FROM api_nonces") == 3); // not due: nothing pruned
  prune = true;
  BOOST_TEST(services::remember_nonce(pool, "k1", "nonce-cccccccccccc", prune_due));
  BOOST_TEST(count("SELECT count(*) FROM api_nonces WHERE nonce = 'old-nonce-aaaaaaaaa'") == 0);
  BOOST_TEST(count("SELECT count(*) FROM api_nonces") == 3);
}

BOOST_FIXTURE_TEST_CASE(a_lost_database_throws_and_asks_no_prune, nonce_fixture) {
  db::connection_pool nowhere{"postgresql://127.0.0.1:1/none?connect_timeout=1", 1};
  BOOST_CHECK_THROW(services::remember_nonce(nowhere, "k1", "nonce-dddddddddddd", prune_due),
                    std::exception);
  BOOST_TEST(asked == 0);
}

BOOST_AUTO_TEST_SUITE_END()
