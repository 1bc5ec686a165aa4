// "host:port" of a listener (MG_HTTP_ADDR, MG_ADMIN_ADDR, MG_CLUSTER_ADDR).
#include <boost/test/unit_test.hpp>
#include <stdexcept>

#include "domain/url.hpp"

using mg::domain::parse_host_port;

BOOST_AUTO_TEST_SUITE(host_port)

BOOST_AUTO_TEST_CASE(splits_at_the_last_colon_and_drops_ipv6_brackets) {
  auto a = parse_host_port("127.0.0.1:8080");
  BOOST_TEST(a.host == "127.0.0.1");
  BOOST_TEST(a.port == 8080);
  auto b = parse_host_port("[::1]:0");
  BOOST_TEST(b.host == "::1");
  BOOST_TEST(b.port == 0);
  BOOST_TEST(parse_host_port("0.0.0.0:65535").port == 65535);
}

BOOST_AUTO_TEST_CASE(refuses_what_is_not_host_port) {
  for (const char* bad : {"localhost", ":80", "h:", "h:65536", "h:8o", "h:123456", "h:-1"})
    BOOST_CHECK_THROW(parse_host_port(bad), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
