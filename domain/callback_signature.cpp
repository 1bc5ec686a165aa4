#include "domain/callback_signature.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cctype>
#include <stdexcept>

#include "domain/hash.hpp"

namespace mg::domain {

namespace {

constexpr std::string_view whsec_prefix = "whsec_";

std::string hmac_sha256_raw(std::string_view key, std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(data.data()), data.size(), md, &len))
    throw std::runtime_error("HMAC(sha256) failed");
  return std::string(reinterpret_cast<const char*>(md), len);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Decimal unix seconds (an optional leading '-' refused); nullopt otherwise.
std::optional<int64_t> parse_unix(const std::string& s) {
  if (s.empty() || s.size() > 18)
    return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

verify_result invalid(std::string why) {
  return {false, std::move(why)};
}

bool too_far(int64_t ts, int64_t now) {
  auto d = ts > now ? ts - now : now - ts;
  return d > callback_timestamp_tolerance_seconds;
}

} // namespace

std::optional<callback_scheme> parse_callback_scheme(std::string_view name) {
  if (name == "v3")
    return callback_scheme::v3;
  if (name == "standard-webhooks")
    return callback_scheme::standard_webhooks;
  return std::nullopt;
}

std::string v3_signature(std::string_view secret, int64_t timestamp, std::string_view nonce,
                         std::string_view body) {
  std::string message =
      std::to_string(timestamp) + "\n" + std::string(nonce) + "\n" + sha256_hex(body);
  return hmac_sha256_hex(secret, message);
}

header_list v3_headers(std::string_view secret, int64_t timestamp, std::string_view nonce,
                       std::string_view body) {
  return {{"X-QTG-Callback-Timestamp", std::to_string(timestamp)},
          {"X-QTG-Callback-Nonce", std::string(nonce)},
          {"X-QTG-Callback-Signature-Version", "v3"},
          {"X-QTG-Callback-Signature", v3_signature(secret, timestamp, nonce, body)}};
}

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0)
    return std::nullopt;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' ||
              (c == '=' && i >= text.size() - 2);
    if (!ok)
      return std::nullopt;
  }
  if (text[text.size() - 2] == '=' && text.back() != '=')
    return std::nullopt;
  std::string out(3 * text.size() / 4, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0)
    return std::nullopt;
  // EVP_DecodeBlock counts padding as zero bytes: drop them.
  size_t pad = text.back() == '=' ? (text[text.size() - 2] == '=' ? 2 : 1) : 0;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

std::optional<std::string> standard_webhooks_key(std::string_view secret) {
  if (secret.substr(0, whsec_prefix.size()) != whsec_prefix)
    return std::nullopt;
  auto key = base64_decode(secret.substr(whsec_prefix.size()));
  if (!key || key->empty())
    return std::nullopt;
  return key;
}

std::string standard_webhooks_signature(std::string_view key, std::string_view id,
                                        int64_t timestamp, std::string_view body) {
  std::string message = std::string(id) + "." + std::to_string(timestamp) + "." + std::string(body);
  return "v1," + base64_encode(hmac_sha256_raw(key, message));
}

header_list standard_webhooks_headers(std::string_view secret, std::string_view id,
                                      int64_t timestamp, std::string_view body) {
  auto key = standard_webhooks_key(secret);
  if (!key)
    throw std::invalid_argument("callback secret is not a whsec_ base64 secret");
  return {{"webhook-id", std::string(id)},
          {"webhook-timestamp", std::to_string(timestamp)},
          {"webhook-signature", standard_webhooks_signature(*key, id, timestamp, body)}};
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::optional<std::string> find_header(const header_list& headers, std::string_view name) {
  auto wanted = lower(name);
  for (auto& [k, v] : headers)
    if (lower(k) == wanted)
      return v;
  return std::nullopt;
}

verify_result verify_v3(std::string_view secret, const header_list& headers, std::string_view body,
                        int64_t now, bool check_age) {
  auto ts = find_header(headers, "X-QTG-Callback-Timestamp");
  auto nonce = find_header(headers, "X-QTG-Callback-Nonce");
  auto version = find_header(headers, "X-QTG-Callback-Signature-Version");
  auto sig = find_header(headers, "X-QTG-Callback-Signature");
  if (!ts || !nonce || !sig)
    return invalid("missing X-QTG-Callback-Timestamp, -Nonce or -Signature header");
  if (version && *version != "v3")
    return invalid("unsupported signature version '" + *version + "'");
  auto t = parse_unix(*ts);
  if (!t)
    return invalid("X-QTG-Callback-Timestamp is not unix seconds");
  if (check_age && too_far(*t, now))
    return invalid("timestamp outside the 300 s tolerance");
  if (!constant_time_equal(lower(*sig), v3_signature(secret, *t, *nonce, body)))
    return invalid("signature mismatch");
  return {true, {}};
}

verify_result verify_standard_webhooks(std::string_view secret, const header_list& headers,
                                       std::string_view body, int64_t now) {
  auto key = standard_webhooks_key(secret);
  if (!key)
    return invalid("secret is not whsec_<base64>");
  auto id = find_header(headers, "webhook-id");
  auto ts = find_header(headers, "webhook-timestamp");
  auto sigs = find_header(headers, "webhook-signature");
  if (!id || !ts || !sigs)
    return invalid("missing webhook-id, webhook-timestamp or webhook-signature header");
  auto t = parse_unix(*ts);
  if (!t)
    return invalid("webhook-timestamp is not unix seconds");
  if (too_far(*t, now))
    return invalid("timestamp outside the 300 s tolerance");
  auto expected = standard_webhooks_signature(*key, *id, *t, body);
  // The header may carry several space-separated signatures (key rotation).
  std::string_view rest = *sigs;
  bool match = false;
  while (!rest.empty()) {
    auto sp = rest.find(' ');
    auto one = rest.substr(0, sp);
    match |= constant_time_equal(one, expected);
    rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
  }
  if (!match)
    return invalid("signature mismatch");
  return {true, {}};
}

} // namespace mg::domain
