// Callback URL checks and address classification (SPEC §5 "Hostile input").
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <cstring>

#include "domain/url.hpp"

using namespace mg::domain;

namespace {

bool refused(const std::string& literal) {
  auto r = is_refused_ip_literal(literal);
  BOOST_REQUIRE_MESSAGE(r.has_value(), literal << " is not an IP literal");
  return *r;
}

} // namespace

BOOST_AUTO_TEST_SUITE(callback_address)

BOOST_AUTO_TEST_CASE(every_refused_ipv4_range_and_its_neighbours) {
  for (auto a :
       {"127.0.0.1",       "127.255.255.254", "0.0.0.0",         "0.1.2.3",        "10.0.0.1",
        "100.64.0.1",      "100.127.255.255", "169.254.169.254", "172.16.0.1",     "172.31.255.255",
        "192.0.0.1",       "192.168.0.1",     "198.18.0.1",      "198.19.255.255", "224.0.0.1",
        "239.255.255.255", "240.0.0.1",       "255.255.255.255", "127.1",          "0x7f000001",
        "2130706433"})
    BOOST_TEST(refused(a), a);
  for (auto a : {"8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.0", "172.32.0.1",
                 "172.15.255.255", "192.0.1.1", "198.17.255.255", "198.20.0.0", "223.255.255.255",
                 "11.0.0.1", "9.255.255.255"})
    BOOST_TEST(!refused(a), a);
}

BOOST_AUTO_TEST_CASE(every_refused_ipv6_range_and_embedded_ipv4) {
  for (auto a : {"::", "::1", "fc00::1", "fdff::1", "fe80::1", "febf::1", "fec0::1", "ff02::1",
                 "ff00::", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:7f00:1", "::127.0.0.1",
                 "::ffff:100.64.0.1", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe",
                 "2002:7f00:1::1", "::ffff:255.255.255.255"})
    BOOST_TEST(refused(a), a);
  for (auto a : {"2001:db8::1", "2606:4700::1111", "::ffff:8.8.8.8", "::8.8.8.8",
                 "64:ff9b::808:808", "2002:808:808::1", "fbff::1"})
    BOOST_TEST(!refused(a), a);
}

BOOST_AUTO_TEST_CASE(names_are_not_ip_literals) {
  BOOST_TEST(!is_refused_ip_literal("example.com").has_value());
  BOOST_TEST(!is_refused_ip_literal("localhost").has_value());
}

BOOST_AUTO_TEST_CASE(url_forms_refused_at_create_whatever_the_private_setting) {
  for (auto url :
       {"http://[fe80::1%25eth0]/", "http://[fe80::1%eth0]/cb", "http://user@example.com/",
        "https://user:pw@example.com/", "http://evil@127.0.0.1/", "ftp://example.com/",
        "file:///etc/passwd", "gopher://example.com/", "http://exa%6dple.com/",
        "http://example.com\\@evil/", "http://[::1]x/"})
    for (bool allow : {false, true})
      BOOST_TEST(!callback_url_problem(url, allow).empty(), url << " allow=" << allow);
}

BOOST_AUTO_TEST_CASE(private_literals_refused_unless_allowed) {
  for (auto url : {"http://[::ffff:127.0.0.1]/", "http://100.64.1.2/", "http://198.18.0.1/",
                   "http://224.0.0.1/", "http://255.255.255.255/", "http://[ff02::1]/",
                   "http://[::127.0.0.1]/", "http://192.0.0.8/"}) {
    BOOST_TEST(!callback_url_problem(url, false).empty(), url);
    BOOST_TEST(callback_url_problem(url, true).empty(), url);
  }
  BOOST_TEST(callback_url_problem("https://example.com:8443/cb?x=1", false).empty());
  BOOST_TEST(callback_url_problem("https://[2001:db8::1]:443/cb", false).empty());
}

BOOST_AUTO_TEST_SUITE_END()
