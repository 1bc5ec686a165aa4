// Which database errors replace a connection: what a PostgreSQL failover
// throws at a session that outlived its primary; and what the front doors
// make of an error escaping a service call.
#include <boost/test/unit_test.hpp>
#include <stdexcept>

#include "persistence/db.hpp"
#include "services/call_failure.hpp"

using mg::db::is_connection_error;

BOOST_AUTO_TEST_SUITE(connection_errors)

BOOST_AUTO_TEST_CASE(failover_sqlstates_are_connection_errors) {
  for (const char* state : {"25006", "57P01", "57P03", "08006", "08001"})
    BOOST_TEST(is_connection_error(pqxx::sql_error("failover", "SELECT 1", state)), state);
  BOOST_TEST(is_connection_error(pqxx::broken_connection("gone")));
  BOOST_TEST(is_connection_error(pqxx::in_doubt_error("commit outcome unknown")));
  // libpqxx's own failure on a session without a server.
  BOOST_TEST(
      is_connection_error(pqxx::failure("Could not obtain client encoding: not connected.")));
}

BOOST_AUTO_TEST_CASE(request_and_data_errors_keep_the_connection) {
  for (const char* state : {"23505", "22P02", "40001", "40P01", "57014", "42P01", ""})
    BOOST_TEST(!is_connection_error(pqxx::sql_error("refused", "SELECT 1", state)), state);
  BOOST_TEST(!is_connection_error(pqxx::unique_violation("dup", "INSERT", "23505")));
  BOOST_TEST(!is_connection_error(std::runtime_error("not a database error")));
}

BOOST_AUTO_TEST_CASE(front_doors_tell_a_refused_value_from_a_lost_database_from_a_fault) {
  using mg::services::call_failure;
  using mg::services::classify_failure;
  BOOST_TEST((classify_failure(pqxx::data_exception("bad time", "SELECT", "22007")) ==
              call_failure::refused_value));
  BOOST_TEST((classify_failure(pqxx::broken_connection("gone")) == call_failure::database_away));
  BOOST_TEST((classify_failure(pqxx::sql_error("admin shutdown", "SELECT", "57P01")) ==
              call_failure::database_away));
  BOOST_TEST(
      (classify_failure(pqxx::unique_violation("dup", "INSERT", "23505")) == call_failure::fault));
  BOOST_TEST((classify_failure(std::runtime_error("bug")) == call_failure::fault));
}

BOOST_AUTO_TEST_SUITE_END()
