// SPEC §5 request signatures: canonical query, signature vectors computed
// independently (python3 hmac/hashlib), key file parsing, nonce format.
#include <boost/test/unit_test.hpp>
#include <stdexcept>
#include <string>

#include "domain/api_auth.hpp"

using namespace mg::api;

namespace {

// The message of the std::invalid_argument parse_api_keys throws ("" if none).
std::string key_error(const std::string& json) {
  try {
    parse_api_keys(json);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_SUITE(api_auth)

BOOST_AUTO_TEST_CASE(empty_query_is_empty) {
  BOOST_TEST(canonical_query("") == "");
}

BOOST_AUTO_TEST_CASE(pairs_sorted_by_key_then_value_keeping_duplicates) {
  BOOST_TEST(canonical_query("b=2&a=1") == "a=1&b=2");
  BOOST_TEST(canonical_query("a=2&a=1&a=2") == "a=1&a=2&a=2");
  BOOST_TEST(canonical_query("a=b&a=B") == "a=B&a=b");
  // Sorted on the encoded form, byte order: 'A' < 'a%5B%5D' < 'b'.
  BOOST_TEST(canonical_query("b=1&a%5B%5D=x&A=1") == "A=1&a%5B%5D=x&b=1");
}

BOOST_AUTO_TEST_CASE(plus_is_a_literal_plus) {
  BOOST_TEST(canonical_query("q=a+b") == "q=a%2Bb");
  BOOST_TEST(canonical_query("q=a%2Bb") == canonical_query("q=a+b"));
  BOOST_TEST(canonical_query("q=a%20b") == "q=a%20b");
  BOOST_TEST(canonical_query("q=a%20b") != canonical_query("q=a+b"));
}

BOOST_AUTO_TEST_CASE(escapes_reencoded_upper_case_unreserved_decoded) {
  BOOST_TEST(canonical_query("x=%e2%82%ac") == "x=%E2%82%AC");
  BOOST_TEST(canonical_query("k=%7E%2D%2E%5F%41z9") == "k=~-._Az9");
  BOOST_TEST(canonical_query("a=b=c") == "a=b%3Dc");
  BOOST_TEST(canonical_query("p=/x?y") == "p=%2Fx%3Fy");
}

BOOST_AUTO_TEST_CASE(unicode_bytes_are_percent_encoded) {
  BOOST_TEST(canonical_query("x=\xE2\x82\xAC") == "x=%E2%82%AC");
  BOOST_TEST(canonical_query("\xC3\xA9=1") == "%C3%A9=1");
}

BOOST_AUTO_TEST_CASE(pair_without_equals_has_empty_value) {
  BOOST_TEST(canonical_query("flag&a=1") == "a=1&flag=");
  BOOST_TEST(canonical_query("flag") == canonical_query("flag="));
}

BOOST_AUTO_TEST_CASE(malformed_escapes_and_empty_pieces) {
  BOOST_TEST(canonical_query("a=%zz&b=%4") == "a=%25zz&b=%254");
  BOOST_TEST(canonical_query("a=1&&b=2&") == "a=1&b=2");
}

BOOST_AUTO_TEST_CASE(decode_query_keeps_plus_and_order) {
  auto pairs = decode_query("q=a+b%20c&flag&q=%41");
  BOOST_REQUIRE(pairs.size() == 3u);
  BOOST_TEST(pairs[0].first == "q");
  BOOST_TEST(pairs[0].second == "a+b c");
  BOOST_TEST(pairs[1].first == "flag");
  BOOST_TEST(pairs[1].second == "");
  BOOST_TEST(pairs[2].second == "A");
}

BOOST_AUTO_TEST_CASE(canonical_request_layout) {
  BOOST_TEST(canonical_request("GET", "/v3/x", "b=1&a=2", "", "1700000000", "n") ==
             "GET\n/v3/x\na=2&b=1\n"
             "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
             "1700000000\nn");
}

// Expected values from:
//   python3 -c 'import hmac,hashlib; body=b"{\"amount\":\"1.5\"}";
//     canon="POST\n/v3/movements/abc%2Fdef/approve\na=1&a=2&q=a%2Bb%20c\n"
//       + hashlib.sha256(body).hexdigest() + "\n1700000000\nnonce_0123456789abcdef";
//     print(hmac.new(b"super-secret-0123456789", canon.encode(), hashlib.sha256).hexdigest())'
BOOST_AUTO_TEST_CASE(signature_vectors_match_python) {
  BOOST_TEST(sign_request("super-secret-0123456789", "POST", "/v3/movements/abc%2Fdef/approve",
                          "q=a+b%20c&a=2&a=1", "{\"amount\":\"1.5\"}", "1700000000",
                          "nonce_0123456789abcdef") ==
             "bc6728a85bad28f074678374bd32c31038b44e1a0aa21110b2c1a42fa44d0135");
  BOOST_TEST(sign_request("0123456789abcdef", "GET", "/v3/templates", "", "", "1700000000",
                          "ABCDEFGHIJKLMNOP") ==
             "f0b440e0902131124435c323f70acdae0745346f08ce9d88b75bc4fc161ced58");
}

BOOST_AUTO_TEST_CASE(constant_time_equal_compares_content_and_length) {
  BOOST_TEST(constant_time_equal("abc", "abc"));
  BOOST_TEST(constant_time_equal("", ""));
  BOOST_TEST(!constant_time_equal("abc", "abd"));
  BOOST_TEST(!constant_time_equal("abc", "abcd"));
  BOOST_TEST(!constant_time_equal("", "a"));
}

BOOST_AUTO_TEST_CASE(nonce_format) {
  BOOST_TEST(valid_nonce("abcdefghijklmnop"));    // 16
  BOOST_TEST(valid_nonce(std::string(128, 'Z'))); // 128
  BOOST_TEST(valid_nonce("A-b_0123456789xyz"));
  BOOST_TEST(!valid_nonce("abcdefghijklmno"));     // 15
  BOOST_TEST(!valid_nonce(std::string(129, 'a'))); // 129
  BOOST_TEST(!valid_nonce("abcdefghijklmno="));
  BOOST_TEST(!valid_nonce("abcdefgh ijklmnop"));
  BOOST_TEST(!valid_nonce("abcdefghijklmnop\xC3\xA9"));
  BOOST_TEST(!valid_nonce(""));
}

BOOST_AUTO_TEST_CASE(parse_api_keys_reads_entries) {
  auto keys = parse_api_keys(R"({"keys": [
    {"key_id": "ops-1", "secret": "0123456789abcdef", "scopes": ["create", "read", "read"]},
    {"key_id": "ops-2", "secret": "fedcba9876543210xx", "scopes": ["approve", "admin"]}]})");
  BOOST_REQUIRE(keys.size() == 2u);
  BOOST_TEST(keys[0].key_id == "ops-1");
  BOOST_TEST(keys[0].secret == "0123456789abcdef");
  BOOST_TEST(keys[0].scopes.size() == 2u); // duplicate scope folded
  BOOST_TEST((keys[1].scopes[0] == scope::approve));
  BOOST_TEST((keys[1].scopes[1] == scope::admin));
  BOOST_TEST(parse_api_keys(R"({"keys": []})").empty());
}

BOOST_AUTO_TEST_CASE(parse_api_keys_errors_are_clear_and_hide_secrets) {
  BOOST_TEST(contains(key_error("nope"), "not JSON"));
  BOOST_TEST(contains(key_error(R"({"key": []})"), "{\"keys\""));
  BOOST_TEST(
      contains(key_error(R"({"keys": [{"secret": "0123456789abcdef", "scopes": ["read"]}]})"),
               "key_id: missing or empty"));
  BOOST_TEST(contains(
      key_error(R"({"keys": [{"key_id": "", "secret": "0123456789abcdef", "scopes": ["read"]}]})"),
      "key_id: missing or empty"));
  auto short_secret =
      key_error(R"({"keys": [{"key_id": "k1", "secret": "tooshort-SECRET", "scopes": ["read"]}]})");
  BOOST_TEST(contains(short_secret, "shorter than 16"));
  BOOST_TEST(contains(short_secret, "k1"));
  BOOST_TEST(!contains(short_secret, "tooshort-SECRET"));
  auto bad_scope = key_error(
      R"({"keys": [{"key_id": "k1", "secret": "hidden-secret-value", "scopes": ["write"]}]})");
  BOOST_TEST(contains(bad_scope, "unknown scope \"write\""));
  BOOST_TEST(!contains(bad_scope, "hidden-secret-value"));
  auto dup = key_error(R"({"keys": [
    {"key_id": "k1", "secret": "hidden-secret-value", "scopes": ["read"]},
    {"key_id": "k1", "secret": "other-hidden-secret", "scopes": ["read"]}]})");
  BOOST_TEST(contains(dup, "duplicate key_id"));
  BOOST_TEST(!contains(dup, "hidden-secret-value"));
  BOOST_TEST(!contains(dup, "other-hidden-secret"));
  BOOST_TEST(contains(key_error(R"({"keys": [{"key_id": "k1", "secret": "hidden-secret-value"}]})"),
                      "scopes"));
}

BOOST_AUTO_TEST_CASE(scope_names) {
  BOOST_TEST((parse_scope("create") == scope::create));
  BOOST_TEST((parse_scope("admin") == scope::admin));
  BOOST_TEST(!parse_scope("Admin"));
  BOOST_TEST(!parse_scope(""));
}

BOOST_AUTO_TEST_SUITE_END()
