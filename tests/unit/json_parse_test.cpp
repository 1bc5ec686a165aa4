// mg::json::parse edges found by tests/fuzz/create_body_fuzz.
#include <boost/test/unit_test.hpp>
#include <string>

#include "domain/json.hpp"

using namespace std::string_literals;

BOOST_AUTO_TEST_SUITE(json_parse)

BOOST_AUTO_TEST_CASE(a_nul_byte_is_not_the_end_of_the_input) {
  BOOST_TEST(!mg::json::parse("{}\0{\"amount\":\"9\"}"s));
  BOOST_TEST(!mg::json::parse("1\0"s));
  std::string why;
  BOOST_TEST(!mg::json::parse("[1,\0]"s, &why));
  BOOST_TEST(!why.empty());
  // U+0000 is refused whether raw or escaped (SPEC §5).
  BOOST_TEST(!mg::json::parse("\"\\u0000\""));
}

BOOST_AUTO_TEST_SUITE_END()
