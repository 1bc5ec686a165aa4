#include "http/api_server.hpp"

#include <chrono>
#include <httplib.h>
#include <mutex>
#include <optional>
#include <thread>

#include "config/log.hpp"
#include "domain/request_timestamp.hpp"
#include "domain/utf8.hpp"
#include "http/guarded_server.hpp"
#include "http/metrics_route.hpp"
#include "http/rate_limiter.hpp"
#include "http/route_pattern.hpp"
#include "http/server_common.hpp"
#include "services/call_failure.hpp"
#include "services/nonce_service.hpp"

namespace mg::http {

namespace {

constexpr size_t max_body_bytes = 1024 * 1024; // SPEC §5: over 1 MiB → 413
constexpr long long max_skew_seconds = 300;
// Pruning is cheap but not free: once per this many new nonces or per minute.
constexpr long prune_every_inserts = 256;
constexpr auto prune_every = std::chrono::seconds(60);

api::reply unauthorized(std::string message) {
  return api::error_reply({401, "unauthorized", std::move(message), {}});
}

long long unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

listener_limits limits(const config::settings& s) {
  listener_limits l;
  l.max_body_bytes = max_body_bytes;
  l.request_timeout = request_timeout(s);
  l.max_threads = 256; // far above the 64 slow clients SPEC §5 must survive
  return l;
}

struct compiled_route {
  route r;
  route_pattern pattern;
};

} // namespace

struct api_server::impl {
  impl(const config::settings& s, std::vector<api::api_key> key_list,
       services::service_context& ctx, std::vector<route> route_list)
      : service_ctx(ctx), limiter(s.api_rate_limit_per_second), server(limits(s)) {
    for (auto& k : key_list) {
      std::string id = k.key_id;
      keys.emplace(std::move(id), std::move(k));
    }
    for (auto& r : route_list) {
      route_pattern pattern(r.pattern);
      routes.push_back({std::move(r), std::move(pattern)});
    }
    init_http_response_classes("api");
  }

  std::map<std::string, api::api_key> keys;
  services::service_context& service_ctx;
  std::vector<compiled_route> routes;
  std::map<std::string, std::pair<std::string, std::string>> statics; // path → (type, body)
  rate_limiter limiter;
  guarded_server server;
  std::thread thread;

  std::mutex prune_mutex;
  long inserts_since_prune = 0;
  std::chrono::steady_clock::time_point last_prune = std::chrono::steady_clock::now();

  void install_handlers();
  api::reply serve(const httplib::Request& req, std::string& key_id, std::string& matched);
  std::optional<api::reply> authenticate(const httplib::Request& req, const std::string& raw_path,
                                         const std::string& raw_query, api::caller& who);
  std::optional<api::reply> remember_nonce(const std::string& key_id, const std::string& nonce);
  /// Counts one new nonce; true when the table is due a prune.
  bool prune_due();
  api::reply dispatch(const compiled_route& cr, std::vector<std::string> params,
                      const httplib::Request& req, const std::string& raw_query, api::caller who);
};

api::reply api_server::impl::serve(const httplib::Request& req, std::string& key_id,
                                   std::string& matched) {
  // httplib refuses a Content-Length over the limit itself; a chunked body
  // is only measured once read.
  if (req.body.size() > max_body_bytes)
    return api::error_reply(payload_too_large());

  // The signature covers the path exactly as sent: take it from the target,
  // never from req.path (which httplib has percent-decoded).
  const auto q = req.target.find('?');
  const std::string raw_path = req.target.substr(0, q);
  const std::string raw_query = q == std::string::npos ? "" : req.target.substr(q + 1);

  // Unsigned documents outside /v3 (the OpenAPI description).
  if (auto doc = statics.find(raw_path); doc != statics.end() && req.method == "GET") {
    matched = raw_path;
    return {200, doc->second.second, {{"Content-Type", doc->second.first}}};
  }
  if (raw_path != "/v3" && raw_path.rfind("/v3/", 0) != 0)
    return api::error_reply(api::not_found("no such path"));

  api::caller who;
  if (auto refused = authenticate(req, raw_path, raw_query, who))
    return *refused;
  key_id = who.key_id;

  const compiled_route* found = nullptr;
  std::optional<std::vector<std::string>> params;
  std::string allowed;
  for (const auto& cr : routes) {
    auto m = cr.pattern.match(raw_path);
    if (!m)
      continue;
    matched = cr.r.pattern; // the metrics label: the pattern, never the raw path
    if (cr.r.method != req.method) {
      allowed += (allowed.empty() ? "" : ", ") + cr.r.method;
      continue;
    }
    // A literal segment beats a capture ("/x/new" over "/x/{id}").
    if (!found || m->size() < params->size()) {
      found = &cr;
      params = std::move(m);
    }
  }
  if (found)
    matched = found->r.pattern;
  if (!found && allowed.empty())
    return api::error_reply(api::not_found("no such path"));
  if (!found) {
    auto r = api::error_reply({405, "method_not_allowed", "method not allowed here", {}});
    r.headers.emplace_back("Allow", allowed);
    return r;
  }

  if (!who.has(found->r.scope))
    return api::error_reply(
        api::forbidden(std::string("key lacks scope '") + api::to_string(found->r.scope) + "'"));

  if (int wait = limiter.acquire(who.key_id)) {
    auto r = api::error_reply({429, "rate_limited", "rate limit exceeded; retry later", {}});
    r.headers.emplace_back("Retry-After", std::to_string(wait));
    return r;
  }

  return dispatch(*found, std::move(*params), req, raw_query, std::move(who));
}

std::optional<api::reply> api_server::impl::authenticate(const httplib::Request& req,
                                                         const std::string& raw_path,
                                                         const std::string& raw_query,
                                                         api::caller& who) {
  for (const char* h : {"X-QTG-Key-Id", "X-QTG-Timestamp", "X-QTG-Nonce", "X-QTG-Signature"}) {
    // Two copies would let one be checked and the other be believed.
    if (req.get_header_value_count(h) > 1)
      return unauthorized(std::string("header ") + h + " given more than once");
    if (req.get_header_value(h).empty())
      return unauthorized(std::string("missing header ") + h);
  }
  const std::string key_id = req.get_header_value("X-QTG-Key-Id");
  const std::string timestamp = req.get_header_value("X-QTG-Timestamp");
  const std::string nonce = req.get_header_value("X-QTG-Nonce");
  const std::string signature = req.get_header_value("X-QTG-Signature");

  auto ts = api::parse_request_timestamp(timestamp);
  if (!ts)
    return unauthorized("X-QTG-Timestamp must be unix seconds as a decimal integer");
  long long skew = unix_now() - *ts;
  if (skew > max_skew_seconds || skew < -max_skew_seconds)
    return unauthorized("X-QTG-Timestamp is more than 300 s away from the server's clock");
  if (!api::valid_nonce(nonce))
    return unauthorized("X-QTG-Nonce must be 16-128 characters of [A-Za-z0-9_-]");
  auto key = keys.find(key_id);
  if (key == keys.end())
    return unauthorized("unknown key");
  const std::string expected = api::sign_request(key->second.secret, req.method, raw_path,
                                                 raw_query, req.body, timestamp, nonce);
  if (!api::constant_time_equal(expected, signature))
    return unauthorized("bad signature");
  // Only a verified request may spend a row in api_nonces: forged ones must
  // not be able to fill the table.
  if (auto refused = remember_nonce(key_id, nonce))
    return refused;
  who.key_id = key_id;
  who.scopes = key->second.scopes;
  return std::nullopt;
}

std::optional<api::reply> api_server::impl::remember_nonce(const std::string& key_id,
                                                           const std::string& nonce) {
  bool fresh = false;
  try {
    fresh =
        services::remember_nonce(service_ctx.pool, key_id, nonce, [this] { return prune_due(); });
  } catch (const std::exception& e) {
    log::warn("nonce check failed; answering 503", {{"error", e.what()}});
    return api::error_reply(api::unavailable());
  }
  if (!fresh)
    return unauthorized("replayed nonce");
  return std::nullopt;
}

bool api_server::impl::prune_due() {
  std::lock_guard<std::mutex> lock(prune_mutex);
  auto now = std::chrono::steady_clock::now();
  if (++inserts_since_prune < prune_every_inserts && now - last_prune < prune_every)
    return false;
  inserts_since_prune = 0;
  last_prune = now;
  return true;
}

api::reply api_server::impl::dispatch(const compiled_route& cr, std::vector<std::string> params,
                                      const httplib::Request& req, const std::string& raw_query,
                                      api::caller who) {
  call c;
  c.who = std::move(who);
  c.params = std::move(params);
  c.raw_query = raw_query;
  // Text PostgreSQL would refuse (ill-formed UTF-8, U+0000) is refused here
  // as what it is: bad input, 400.
  for (const auto& p : c.params)
    if (!domain::is_clean_text(api::percent_decode(p)))
      return api::error_reply(
          api::bad_request("path segment is not valid UTF-8 text", {{"path", "bad bytes"}}));
  for (auto& [k, v] : api::decode_query(raw_query)) {
    if (!domain::is_clean_text(k) || !domain::is_clean_text(v))
      return api::error_reply(
          api::bad_request("query parameter is not valid UTF-8 text", {{k, "bad bytes"}}));
    c.query.emplace(std::move(k), std::move(v));
  }
  c.body = req.body;
  c.json.SetObject();
  if (cr.r.takes_body && !req.body.empty()) {
    std::string why;
    auto parsed = json::read(req.body, &why);
    if (!parsed)
      return api::error_reply(api::bad_request("body is not acceptable JSON: " + why));
    if (!parsed->doc.IsObject())
      return api::error_reply(api::bad_request("body must be a JSON object"));
    c.json = std::move(parsed->doc);
    c.members = std::move(parsed->members);
  }
  try {
    return cr.r.handle(c);
  } catch (const std::exception& e) {
    switch (services::classify_failure(e)) {
    case services::call_failure::refused_value:
      log::warn("handler refused data", {{"route", cr.r.pattern}, {"error", e.what()}});
      return api::error_reply(api::bad_request("a value in the request is not acceptable"));
    case services::call_failure::database_away:
      log::error("handler lost the database", {{"route", cr.r.pattern}, {"error", e.what()}});
      return api::error_reply(api::unavailable());
    case services::call_failure::fault:
      break;
    }
    log::error("handler failed", {{"route", cr.r.pattern}, {"error", e.what()}});
    return api::error_reply(internal_error());
  } catch (...) {
    log::error("handler failed", {{"route", cr.r.pattern}, {"error", "unknown exception"}});
    return api::error_reply(internal_error());
  }
}

void api_server::impl::install_handlers() {
  httplib::Server::Handler handler = [this](const httplib::Request& req, httplib::Response& res) {
    log::component_scope component("api");
    const auto started = std::chrono::steady_clock::now();
    std::string key_id;
    std::string matched;
    api::reply reply;
    try {
      reply = serve(req, key_id, matched);
    } catch (const std::exception& e) {
      log::error("request failed", {{"error", e.what()}});
      reply = api::error_reply(internal_error());
    }
    write_reply(res, reply);
    log_request(req, res.status, key_id.empty() ? req.get_header_value("X-QTG-Key-Id") : key_id,
                started);
    record_http_request("api", req.method, matched, res.status, started);
  };
  // One catch-all per method: routing (on the raw path) is ours.
  const std::string any = "[\\s\\S]*";
  server.Get(any, handler);
  server.Post(any, handler);
  server.Put(any, handler);
  server.Patch(any, handler);
  server.Delete(any, handler);
  server.Options(any, handler);
  install_error_handlers(server);
}

api_server::api_server(const config::settings& settings, std::vector<api::api_key> keys,
                       services::service_context& services, std::vector<route> routes)
    : impl_(std::make_unique<impl>(settings, std::move(keys), services, std::move(routes))) {
  impl_->install_handlers();
}

api_server::~api_server() {
  stop();
}

void api_server::serve_static(const std::string& path, const std::string& content_type,
                              std::string body) {
  impl_->statics[path] = {content_type, std::move(body)};
}

int api_server::start(const std::string& host_port) {
  return start_listening(impl_->server, impl_->thread, host_port, "api");
}

api::reply api_server::answer_relayed(const relayed_request& r) {
  const std::string raw_path = r.target.substr(0, r.target.find('?'));
  // The relay reaches the signed API and nothing else (not even /openapi.json).
  if (raw_path != "/v3" && raw_path.rfind("/v3/", 0) != 0)
    return api::error_reply(api::not_found("the relay only forwards /v3 paths"));
  httplib::Request req;
  req.method = r.method;
  req.target = r.target;
  req.path = raw_path;
  req.body = r.body;
  for (const auto& [name, value] : r.headers)
    req.headers.emplace(name, value);
  const auto started = std::chrono::steady_clock::now();
  std::string key_id;
  std::string matched;
  api::reply reply = impl_->serve(req, key_id, matched);
  record_http_request("api", req.method, matched, reply.status, started);
  return reply;
}

int api_server::rate_limit(const std::string& key_id) {
  return impl_->limiter.acquire(key_id);
}

void api_server::stop() {
  stop_listening(impl_->server, impl_->thread);
}

} // namespace mg::http
