// SPEC §5 framing rules on request headers (http/framing.hpp).
#include <boost/test/unit_test.hpp>

#include "http/framing.hpp"

using mg::http::framing_refusal;

namespace {

int status(const httplib::Headers& h, size_t max = 1024 * 1024) {
  auto r = framing_refusal(h, max);
  return r ? r->status : 0;
}

} // namespace

BOOST_AUTO_TEST_SUITE(http_framing)

BOOST_AUTO_TEST_CASE(plain_lengths_pass) {
  BOOST_TEST(status({}) == 0);
  BOOST_TEST(status({{"Content-Length", "0"}}) == 0);
  BOOST_TEST(status({{"Content-Length", "1048576"}}) == 0);
  BOOST_TEST(status({{"Content-Encoding", "identity"}, {"Content-Length", "2"}}) == 0);
  BOOST_TEST(status({{"content-encoding", "IDENTITY"}}) == 0);
}

BOOST_AUTO_TEST_CASE(each_refused_framing) {
  BOOST_TEST(status({{"Transfer-Encoding", "chunked"}}) == 411);
  BOOST_TEST(status({{"transfer-encoding", "identity"}, {"Content-Length", "2"}}) == 411);
  BOOST_TEST(status({{"Content-Encoding", "gzip"}, {"Content-Length", "2"}}) == 415);
  BOOST_TEST(status({{"Content-Encoding", "identity"}, {"Content-Encoding", "br"}}) == 415);
  for (auto bad : {"1e3", "", "-1", "+5", "0x10", "5 ", "1,2", "99999999999999999999"})
    BOOST_TEST(status({{"Content-Length", bad}}) == 400, bad);
  BOOST_TEST(status({{"Content-Length", "2"}, {"content-length", "2"}}) == 400);
  BOOST_TEST(status({{"Content-Length", "1048577"}}) == 413);
  BOOST_TEST(status({{"Content-Length", "65537"}}, 65536) == 413);
}

BOOST_AUTO_TEST_SUITE_END()
