#pragma once
// Callback signatures (SPEC §6): the reference's v3 headers and the
// Standard Webhooks scheme, signing for the dispatcher and verification
// for receivers (the `movegate callbacks verify` CLI and the tests).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mg::domain {

enum class callback_scheme { v3, standard_webhooks };

/// "v3" | "standard-webhooks" → the scheme; nullopt otherwise.
std::optional<callback_scheme> parse_callback_scheme(std::string_view name);

using header_list = std::vector<std::pair<std::string, std::string>>;

/// Lower-case hex HMAC-SHA256(secret, "{timestamp}\n{nonce}\n{hex sha256(body)}").
std::string v3_signature(std::string_view secret, int64_t timestamp, std::string_view nonce,
                         std::string_view body);

/// X-QTG-Callback-Timestamp, -Nonce, -Signature-Version: v3, -Signature.
/// Fixed per outbox row: every retry sends the same four values.
header_list v3_headers(std::string_view secret, int64_t timestamp, std::string_view nonce,
                       std::string_view body);

/// Standard base64 (with padding).
std::string base64_encode(std::string_view bytes);
/// Strict standard base64 (padding required, no whitespace); nullopt when malformed.
std::optional<std::string> base64_decode(std::string_view text);

/// The HMAC key of a "whsec_<base64>" secret; nullopt when the prefix is
/// missing or the rest is not base64 of at least one byte.
std::optional<std::string> standard_webhooks_key(std::string_view secret);

/// "v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>".
std::string standard_webhooks_signature(std::string_view key, std::string_view id,
                                        int64_t timestamp, std::string_view body);

/// webhook-id, webhook-timestamp, webhook-signature. `secret` must be a
/// valid whsec_ secret (checked at start-up); signed afresh per attempt.
header_list standard_webhooks_headers(std::string_view secret, std::string_view id,
                                      int64_t timestamp, std::string_view body);

/// How far a signed timestamp may lie from now (both schemes' receivers).
inline constexpr int64_t callback_timestamp_tolerance_seconds = 300;

struct verify_result {
  bool valid = false;
  std::string reason; // why not, when !valid
};

/// Looks a header up by name (case-insensitive); nullopt when absent.
std::optional<std::string> find_header(const header_list& headers, std::string_view name);

/// Receiver-side v3 check. v3 retries reuse the enqueue timestamp, so the
/// tolerance applies only when `check_age` is set (a receiver that also
/// dedupes on event_id may accept old retries).
verify_result verify_v3(std::string_view secret, const header_list& headers, std::string_view body,
                        int64_t now, bool check_age);

/// Receiver-side Standard Webhooks check: timestamp within 300 s of `now`,
/// any of the space-separated "v1,…" signatures matching (constant time).
verify_result verify_standard_webhooks(std::string_view secret, const header_list& headers,
                                       std::string_view body, int64_t now);

/// Constant-time equality (length leaks, content does not).
bool constant_time_equal(std::string_view a, std::string_view b);

} // namespace mg::domain
