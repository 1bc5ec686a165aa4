// X-QTG-Timestamp parsing (SPEC §5: unix seconds, a decimal integer).
#include <boost/test/unit_test.hpp>

#include "domain/request_timestamp.hpp"

using mg::api::parse_request_timestamp;

BOOST_AUTO_TEST_SUITE(request_timestamp)

BOOST_AUTO_TEST_CASE(reads_decimal_seconds) {
  BOOST_TEST(*parse_request_timestamp("1700000000") == 1700000000LL);
  BOOST_TEST(*parse_request_timestamp("0") == 0);
  BOOST_TEST(*parse_request_timestamp("-5") == -5);
  BOOST_TEST(*parse_request_timestamp("999999999999999999") == 999999999999999999LL);
  BOOST_TEST(*parse_request_timestamp("-999999999999999999") == -999999999999999999LL);
}

BOOST_AUTO_TEST_CASE(refuses_anything_else) {
  for (const char* bad : {"", "-", "+5", " 5", "5 ", "1e9", "0x10", "1.5", "--1",
                          "1000000000000000000", "17000000000\n"})
    BOOST_TEST(!parse_request_timestamp(bad).has_value(), bad);
  BOOST_TEST(!parse_request_timestamp(std::string_view("17\0"
                                                       "00",
                                                       5))
                  .has_value());
}

BOOST_AUTO_TEST_SUITE_END()
