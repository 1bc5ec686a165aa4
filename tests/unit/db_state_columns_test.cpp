// persistence/db: a state column's text becomes its domain enum at the SQL
// boundary, and text that names no state is refused, never mapped to one.
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <string>

#include "persistence/db.hpp"

using namespace mg;

BOOST_AUTO_TEST_SUITE(db_state_columns)

BOOST_AUTO_TEST_CASE(known_states_read_as_their_enums) {
  BOOST_TEST((db::node_state_of("SUBMITTING", "node_state") == domain::node_state::submitting));
  BOOST_TEST((db::request_state_of("WAITING_MANUAL_ACTION", "request_state") ==
              domain::request_state::waiting_manual_action));
}

BOOST_AUTO_TEST_CASE(unknown_text_is_refused_naming_its_column) {
  for (const char* bad : {"", "submitting", "DONE", "READY "}) {
    try {
      db::node_state_of(bad, "node_state");
      BOOST_ERROR(std::string("accepted node state '") + bad + "'");
    } catch (const std::runtime_error& e) {
      BOOST_TEST(std::string(e.what()).find("node_state") != std::string::npos, e.what());
    }
    BOOST_CHECK_THROW(db::request_state_of(bad, "request_state"), std::runtime_error);
  }
}

BOOST_AUTO_TEST_SUITE_END()
