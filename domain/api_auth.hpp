#pragma once
// Request signatures of SPEC §5 (pure: no I/O). The canonical string is
//   METHOD \n path \n sorted_query \n hex(sha256(body)) \n timestamp \n nonce
// and the signature its lower-case hex HMAC-SHA256 under the key's secret.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "domain/api.hpp"

namespace mg::api {

struct api_key {
  std::string key_id;
  std::string secret; // never logged
  std::vector<scope> scopes;
};

/// Parses MG_API_KEYS_FILE's JSON (`{"keys": [{"key_id", "secret",
/// "scopes": [...]}]}`); throws std::invalid_argument naming the problem
/// (never echoing a secret).
std::vector<api_key> parse_api_keys(std::string_view json_text);

/// Percent-encodes everything but RFC 3986's unreserved characters
/// (A-Z a-z 0-9 - . _ ~), upper-case %XX.
std::string percent_encode(std::string_view s);

/// SPEC §5's sorted_query built from the raw query (without '?').
std::string canonical_query(std::string_view raw_query);

std::string canonical_request(std::string_view method, std::string_view path,
                              std::string_view raw_query, std::string_view body,
                              std::string_view timestamp, std::string_view nonce);

/// Lower-case hex HMAC-SHA256(secret, canonical_request(...)).
std::string sign_request(std::string_view secret, std::string_view method, std::string_view path,
                         std::string_view raw_query, std::string_view body,
                         std::string_view timestamp, std::string_view nonce);

/// The cluster login proof (SPEC §8, actors/protocol.hpp movement_api_actor):
/// sign_request(secret, "LOGIN", "/v3/cluster/login", "", key_id,
/// timestamp, nonce) — SPEC §5's scheme with the key id as the body.
std::string sign_cluster_login(std::string_view secret, std::string_view key_id,
                               std::string_view timestamp, std::string_view nonce);

/// Constant-time equality (length leaks, content does not).
bool constant_time_equal(std::string_view a, std::string_view b);

/// How long a nonce is remembered (SPEC §5: at least 900 s, longer than the
/// ±300 s timestamp window plus clock drift between processes). The /v3
/// listener and the cluster door both prune with it.
constexpr int nonce_keep_seconds = 900;

/// 16–128 chars of [A-Za-z0-9_-].
bool valid_nonce(std::string_view nonce);

/// "create" | "approve" | "read" | "admin" → the scope; nullopt otherwise.
std::optional<scope> parse_scope(std::string_view name);

/// Percent-decodes `s` ('+' stays '+'; a '%' without two hex digits stays
/// a literal '%').
std::string percent_decode(std::string_view s);

/// The raw query split on '&' into decoded (key, value) pairs in their
/// order; a piece without '=' is (key, ""), empty pieces are skipped.
std::vector<std::pair<std::string, std::string>> decode_query(std::string_view raw_query);

} // namespace mg::api
