// Catalog input checks and the signer posture (pure).
#include <boost/test/unit_test.hpp>

#include "domain/catalog_requests.hpp"
#include "domain/evm_address.hpp"

using namespace mg;
using namespace mg::domain;

namespace {

json::document doc(const char* text) {
  return json::parse_trusted(text, "test");
}

} // namespace

BOOST_AUTO_TEST_SUITE(catalog_requests)

BOOST_AUTO_TEST_CASE(evm_addresses_are_0x_and_40_hex_digits_lower_cased) {
  BOOST_TEST(*canonical_evm_address("0xABCDEF0123456789abcdef0123456789ABCDEF01") ==
             "0xabcdef0123456789abcdef0123456789abcdef01");
  BOOST_TEST(!canonical_evm_address("0XABCDEF0123456789abcdef0123456789ABCDEF01"));
  BOOST_TEST(!canonical_evm_address("0xabcdef0123456789abcdef0123456789abcdef0"));
  BOOST_TEST(!canonical_evm_address("0xabcdef0123456789abcdef0123456789abcdef012"));
  BOOST_TEST(!canonical_evm_address("0xabcdef0123456789abcdef0123456789abcdef0z"));
  BOOST_TEST(!canonical_evm_address(""));
  const char* zero = "0x0000000000000000000000000000000000000000";
  BOOST_TEST(canonical_evm_address(zero).has_value());
  BOOST_TEST(!observed_evm_address(zero));
  BOOST_TEST(observed_evm_address("0x0000000000000000000000000000000000000001").has_value());
}

BOOST_AUTO_TEST_CASE(posture_orphan_unenrolled_match_mismatch) {
  const std::string a = "0xaa", b = "0xbb";
  BOOST_TEST(signer_posture(a, {{true, a}, {true, ""}}) == "orphan");
  BOOST_TEST(signer_posture("", {{false, a}}) == "unenrolled");
  BOOST_TEST(signer_posture(a, {{false, a}, {true, b}}) == "match");
  BOOST_TEST(signer_posture(a, {{false, a}, {false, b}}) == "mismatch");
  BOOST_TEST(signer_posture(a, {{false, ""}}) == "mismatch");
}

BOOST_AUTO_TEST_CASE(proposal_body_fields) {
  BOOST_TEST(parse_proposal_body(doc(R"({"template_key": "k", "plan": {"a": 1}})")).ok());
  auto bad = parse_proposal_body(doc(R"({"plan": 1, "x": 2})"));
  BOOST_TEST(!bad.ok());
  BOOST_TEST(bad.error.status == 400);
  BOOST_TEST(bad.error.details.size() == 3u); // x unknown, template_key missing, plan type
  BOOST_TEST(plan_with_version(R"({"version": 7, "k": "v"})", 2) == R"({"k":"v","version":2})");
}

// Seen while writing tests/fuzz/catalog_bodies_fuzz (which checks it): a plan holding "version"
// twice kept the second, which a reader finding the first then took as the version.
BOOST_AUTO_TEST_CASE(plan_with_version_replaces_every_version_member) {
  BOOST_TEST(plan_with_version(R"({"version": 7, "k": "v", "version": 8})", 2) ==
             R"({"k":"v","version":2})");
}

BOOST_AUTO_TEST_CASE(key_cursor_round_trips_and_refuses_garbage) {
  BOOST_TEST(*decode_key_cursor(encode_key_cursor("cex_to_chain")) == "cex_to_chain");
  BOOST_TEST(!decode_key_cursor("abc"));
  BOOST_TEST(!decode_key_cursor("zz"));
  BOOST_TEST(!decode_key_cursor(""));
}

BOOST_AUTO_TEST_SUITE_END()
