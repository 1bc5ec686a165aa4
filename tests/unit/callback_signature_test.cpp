// Callback signatures (SPEC §6) against vectors computed with Python's
// hmac/hashlib/base64, the verifiers' refusals, and the settings that
// choose the scheme.
#include <boost/test/unit_test.hpp>

#include <map>
#include <vector>

#include "config/settings.hpp"
#include "domain/callback_signature.hpp"

using namespace mg;
using namespace mg::domain;

namespace {

const std::string body = R"({"event_id": "e1"})";
const std::string whsec = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

std::string load_error(std::map<std::string, std::string> env) {
  try {
    config::load_settings([&](const char* n) -> std::optional<std::string> {
      auto it = env.find(n);
      return it == env.end() ? std::nullopt : std::optional(it->second);
    });
    return "";
  } catch (const config::config_error& e) {
    return e.what();
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(callback_signature)

BOOST_AUTO_TEST_CASE(v3_matches_python_hmac) {
  // python3: hmac.new(b"k3y", f"1700000000\nnonce-1\n{sha256(body).hexdigest()}", sha256)
  BOOST_TEST(v3_signature("k3y", 1700000000, "nonce-1", body) ==
             "110dea58bdd08c13355abbf7d24aaf2aab8bbb7e7d3061a6b3c2c6ed4a1a05b7");
  auto h = v3_headers("k3y", 1700000000, "nonce-1", body);
  BOOST_TEST(*find_header(h, "x-qtg-callback-timestamp") == "1700000000");
  BOOST_TEST(*find_header(h, "X-QTG-Callback-Nonce") == "nonce-1");
  BOOST_TEST(*find_header(h, "X-QTG-Callback-Signature-Version") == "v3");
}

BOOST_AUTO_TEST_CASE(standard_webhooks_matches_python) {
  auto key = standard_webhooks_key(whsec);
  BOOST_REQUIRE(key.has_value());
  BOOST_TEST(key->size() == 24u);
  BOOST_TEST(standard_webhooks_signature(*key, "msg_1", 1700000000, body) ==
             "v1,+qMKi+GxoOPnbZMprhvQdRsYxE4Nsxce0ZHt9udK4QA=");
  auto h = standard_webhooks_headers(whsec, "msg_1", 1700000000, body);
  BOOST_TEST(*find_header(h, "webhook-id") == "msg_1");
  BOOST_TEST(*find_header(h, "webhook-timestamp") == "1700000000");
}

BOOST_AUTO_TEST_CASE(base64_round_trip_and_strictness) {
  for (const std::string& s :
       std::vector<std::string>{"a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)})
    BOOST_TEST(*base64_decode(base64_encode(s)) == s);
  BOOST_TEST(base64_encode("ab") == "YWI=");
  BOOST_TEST(!base64_decode("YWI").has_value());   // no padding
  BOOST_TEST(!base64_decode("Y WI=").has_value()); // whitespace
  BOOST_TEST(!base64_decode("YW=I").has_value());  // padding inside
  BOOST_TEST(!standard_webhooks_key("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").has_value());
  BOOST_TEST(!standard_webhooks_key("whsec_not base64!").has_value());
  BOOST_TEST(!standard_webhooks_key("whsec_").has_value());
}

BOOST_AUTO_TEST_CASE(v3_verification) {
  auto h = v3_headers("k3y", 1700000000, "nonce-1", body);
  BOOST_TEST(verify_v3("k3y", h, body, 1700000000, true).valid);
  BOOST_TEST(verify_v3("k3y", h, body, 1700000000 + 86400, false).valid); // old retries pass
  BOOST_TEST(verify_v3("k3y", h, body + " ", 1700000000, true).reason == "signature mismatch");
  BOOST_TEST(verify_v3("other", h, body, 1700000000, true).reason == "signature mismatch");
  BOOST_TEST(!verify_v3("k3y", h, body, 1700000301, true).valid);
  BOOST_TEST(verify_v3("k3y", h, body, 1700000300, true).valid);
  BOOST_TEST(!verify_v3("k3y", {}, body, 1700000000, true).valid);
}

BOOST_AUTO_TEST_CASE(standard_webhooks_verification) {
  auto h = standard_webhooks_headers(whsec, "msg_1", 1700000000, body);
  BOOST_TEST(verify_standard_webhooks(whsec, h, body, 1700000100).valid);
  BOOST_TEST(!verify_standard_webhooks(whsec, h, body, 1700000301).valid); // stale
  BOOST_TEST(!verify_standard_webhooks(whsec, h, body, 1699999699).valid); // future
  BOOST_TEST(!verify_standard_webhooks(whsec, h, body + " ", 1700000000).valid);
  BOOST_TEST(
      !verify_standard_webhooks("whsec_QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB", h, body, 1700000000)
           .valid);
  // Several signatures (key rotation): any match counts.
  for (auto& [k, v] : h)
    if (k == "webhook-signature")
      v = "v1,AAAA " + v;
  BOOST_TEST(verify_standard_webhooks(whsec, h, body, 1700000000).valid);
}

BOOST_AUTO_TEST_CASE(settings_choose_the_scheme) {
  BOOST_TEST(load_error({}) == "");
  BOOST_TEST(load_error({{"MG_CALLBACK_SIGNATURE_SCHEME", "v3"}}) == "");
  auto bad = load_error({{"MG_CALLBACK_SIGNATURE_SCHEME", "v2"}});
  BOOST_TEST(bad.rfind("MG_CALLBACK_SIGNATURE_SCHEME: ", 0) == 0, bad);
  // Standard Webhooks needs a whsec_ secret; the secret is never echoed.
  auto plain = load_error({{"MG_CALLBACK_SIGNATURE_SCHEME", "standard-webhooks"},
                           {"MG_CALLBACK_SECRET", "plain-Secret-99"}});
  BOOST_TEST(plain.rfind("MG_CALLBACK_SECRET: ", 0) == 0, plain);
  BOOST_TEST(plain.find("plain-Secret-99") == std::string::npos);
  auto undecodable = load_error({{"MG_CALLBACK_SIGNATURE_SCHEME", "standard-webhooks"},
                                 {"MG_CALLBACK_SECRET", "whsec_%%%%"}});
  BOOST_TEST(undecodable.rfind("MG_CALLBACK_SECRET: ", 0) == 0);
  BOOST_TEST(undecodable.find("%%%%") == std::string::npos);
  BOOST_TEST(load_error({{"MG_CALLBACK_SIGNATURE_SCHEME", "standard-webhooks"},
                         {"MG_CALLBACK_SECRET", whsec}}) == "");
  BOOST_TEST(load_error({{"MG_CALLBACK_TIMEOUT_SECONDS", "0"}}) != "");
  auto s = config::load_settings([](const char*) { return std::nullopt; });
  BOOST_TEST(s.callback_timeout_seconds == 10);
  BOOST_TEST(s.callback_signature_scheme == "v3");
}

BOOST_AUTO_TEST_SUITE_END()
