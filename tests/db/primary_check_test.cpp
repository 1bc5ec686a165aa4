// /readyz asks for a server that takes writes: a session forced read-only
// (as a demoted primary's are) does not count, however well it answers.
#include <boost/test/unit_test.hpp>

#include "persistence/db.hpp"
#include "persistence/primary_check.hpp"
#include "tests/support/db_fixture.hpp"

using namespace mg;

BOOST_AUTO_TEST_SUITE(primary_check)

BOOST_FIXTURE_TEST_CASE(a_primary_session_accepts_writes, test::db_fixture) {
  BOOST_TEST(db::accepts_writes(*other));
}

BOOST_FIXTURE_TEST_CASE(a_read_only_session_does_not, test::db_fixture) {
  auto c = db::connect(url);
  pqxx::nontransaction(*c).exec("SET default_transaction_read_only = on");
  BOOST_TEST(!db::accepts_writes(*c));
}

BOOST_AUTO_TEST_SUITE_END()
