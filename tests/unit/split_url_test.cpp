// http(s) URLs split into the client's origin and the request target (the
// callback dispatcher, http executors, webhooks).
#include <boost/test/unit_test.hpp>

#include "domain/url.hpp"

using mg::domain::split_url;

BOOST_AUTO_TEST_SUITE(split_url_parts)

BOOST_AUTO_TEST_CASE(splits_origin_and_target) {
  auto p = split_url("https://hooks.example.com:8443/cb?x=1#frag");
  BOOST_REQUIRE(p);
  BOOST_TEST(p->origin == "https://hooks.example.com:8443");
  BOOST_TEST(p->target == "/cb?x=1");
  auto bare = split_url("http://example.com");
  BOOST_REQUIRE(bare);
  BOOST_TEST(bare->target == "/");
  BOOST_TEST(!split_url("ftp://example.com/"));
  BOOST_TEST(!split_url("example.com/"));
}

// Found by tests/fuzz/callback_url_fuzz: the create check accepts any case
// of the scheme, and the HTTP client only reads lower case.
BOOST_AUTO_TEST_CASE(an_upper_case_scheme_is_lower_cased_in_the_origin) {
  auto p = split_url("HTTPS://Example.COM/Path");
  BOOST_REQUIRE(p);
  BOOST_TEST(p->origin == "https://Example.COM");
  BOOST_TEST(p->target == "/Path");
  auto q = split_url("Http://h?q");
  BOOST_REQUIRE(q);
  BOOST_TEST(q->origin == "http://h");
  BOOST_TEST(q->target == "/?q");
}

BOOST_AUTO_TEST_SUITE_END()
