#pragma once
// The /v3 front door on cpp-httplib (SPEC §5). In SPEC §5's order it
// answers 413 (body over 1 MiB) → 401 (missing/malformed auth headers,
// unknown key, timestamp skew > 300 s, bad signature, replayed nonce) →
// 403 (scope) → 429 (per-key token bucket, Retry-After) → 400 (a route
// that takes a body got something that is not a JSON object; an empty
// body is {}) → 404 (no route) — then hands the call to the route's
// handler. Never a 500: a handler exception is logged and answered 503
// when the database is the cause, else 500-free "internal" 503.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "domain/api.hpp"
#include "domain/api_auth.hpp"
#include "domain/json.hpp"
#include "services/service_context.hpp"

namespace mg::http {

/// A call that passed the front door's checks.
struct call {
  api::caller who;
  std::vector<std::string> params;               // path captures in pattern order (raw, as sent)
  std::string raw_query;                         // after '?', as sent ("" when none)
  std::multimap<std::string, std::string> query; // decoded (+ stays '+')
  std::string body;
  json::document json; // the body parsed (routes with takes_body), {} when empty
  /// Each top-level member of `json` as the reader serialised it (numbers
  /// exactly as sent): what create stores.
  std::map<std::string, std::string> members;
};

struct route {
  std::string method;  // GET, POST, PUT
  std::string pattern; // e.g. "/v3/movements/{id}/approve"
  api::scope scope;
  bool takes_body = false;
  std::function<api::reply(const call&)> handle;
};

/// A /v3 request that reached this process through another listener (the
/// admin page's same-origin relay), as it would have come to the /v3 port.
struct relayed_request {
  std::string method;
  std::string target; // "/v3/..." plus optional "?query", exactly as signed
  /// Every copy of each X-QTG-* header the client sent, in order.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

class api_server {
public:
  /// Nonces are remembered through `services` (PostgreSQL's api_nonces).
  api_server(const config::settings& settings, std::vector<api::api_key> keys,
             services::service_context& services, std::vector<route> routes);
  ~api_server();

  /// Answers GET `path` (exact, outside /v3) with `body` and no auth
  /// (e.g. /openapi.json). Call before start().
  void serve_static(const std::string& path, const std::string& content_type, std::string body);

  /// Binds `host:port` (port 0 picks a free one), serves on a thread of its
  /// own and returns the bound port; throws std::runtime_error on failure.
  int start(const std::string& host_port);
  void stop();

  /// Answers `r` exactly as a request to the /v3 port: the same signature
  /// and nonce check, scopes, rate limit, routing and handlers. Only X-QTG-*
  /// headers are looked at; a target outside /v3 answers 404.
  api::reply answer_relayed(const relayed_request& r);

  /// Takes a token from `key_id`'s bucket of the per-key rate limiter: 0
  /// when the call may go ahead, else Retry-After seconds. Other front
  /// doors (cluster sessions) share the buckets through it.
  int rate_limit(const std::string& key_id);

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace mg::http
