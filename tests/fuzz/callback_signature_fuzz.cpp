// Receiver-side callback signature checks (SPEC §6): verify_v3 and
// verify_standard_webhooks on hostile headers, base64, whsec_ secrets.
// Input: secret \n timestamp \n nonce-or-id \n signature \n body.
// Invariants: no exception; what the sender signs verifies, and fails once
// the body changes; a forged header set verifies only with the right
// signature; base64 decode inverts encode.
#include "domain/callback_signature.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto f = fuzz::split(fuzz::bytes(data, size), '\n', 5);
  const std::string &secret = f[0], &ts = f[1], &nonce = f[2], &sig = f[3], &body = f[4];
  const int64_t now = 1700000000;

  // Hostile headers, any case, possibly repeated.
  domain::header_list v3{{"x-qtg-callback-timestamp", ts},
                         {"X-QTG-Callback-Nonce", nonce},
                         {"X-QTG-CALLBACK-SIGNATURE", sig}};
  auto r = domain::verify_v3(secret, v3, body, now, true);
  MG_FUZZ_CHECK(r.valid == r.reason.empty(), "valid xor a reason");
  if (r.valid)
    MG_FUZZ_CHECK(sig.size() == 64, "a valid v3 signature is 64 hex digits");
  domain::header_list sw{
      {"webhook-id", nonce}, {"webhook-timestamp", ts}, {"webhook-signature", sig}};
  auto s = domain::verify_standard_webhooks(secret, sw, body, now);
  MG_FUZZ_CHECK(s.valid == s.reason.empty(), "valid xor a reason");

  // What the sender signs verifies, at any time within the window.
  const int64_t t = now - static_cast<int64_t>(body.size() % 301);
  auto signed_v3 = domain::v3_headers(secret, t, nonce, body);
  MG_FUZZ_CHECK(domain::verify_v3(secret, signed_v3, body, now, true).valid, "v3 sign→verify");
  MG_FUZZ_CHECK(!domain::verify_v3(secret, signed_v3, body + "x", now, false).valid,
                "v3 covers the body");
  MG_FUZZ_CHECK(!domain::verify_v3(secret, signed_v3, body, now + 400, true).valid,
                "v3 age is checked");
  if (auto key = domain::standard_webhooks_key(secret)) {
    MG_FUZZ_CHECK(!key->empty(), "a whsec_ key has bytes");
    auto h = domain::standard_webhooks_headers(secret, nonce, t, body);
    MG_FUZZ_CHECK(domain::verify_standard_webhooks(secret, h, body, now).valid, "sw sign→verify");
    MG_FUZZ_CHECK(!domain::verify_standard_webhooks(secret, h, body + "x", now).valid,
                  "sw covers the body");
  } else {
    MG_FUZZ_CHECK(!s.valid, "no valid secret, nothing verifies");
  }

  // base64
  const std::string enc = domain::base64_encode(body);
  MG_FUZZ_CHECK(domain::base64_decode(enc) == body || body.empty(), "decode(encode(x)) == x");
  if (auto dec = domain::base64_decode(sig)) {
    size_t pad = sig.back() == '=' ? (sig[sig.size() - 2] == '=' ? 2 : 1) : 0;
    MG_FUZZ_CHECK(dec->size() == sig.size() / 4 * 3 - pad, "decoded length");
  }
  if (auto scheme = domain::parse_callback_scheme(secret))
    MG_FUZZ_CHECK(secret == "v3" || secret == "standard-webhooks", "scheme names");
  return 0;
}
