#include "http/admin_server.hpp"

#include <httplib.h>
#include <regex>
#include <strings.h>
#include <thread>

#include "config/log.hpp"
#include "domain/api.hpp"
#include "domain/api_auth.hpp"
#include "domain/json_writer.hpp"
#include "http/guarded_server.hpp"
#include "http/server_common.hpp"
#include "services/call_failure.hpp"

namespace mg::http {

namespace {

constexpr size_t default_body_bytes = 64 * 1024;

/// The listener reads at most the largest body a route takes; each path is
/// held to its own route's limit before its body is read.
listener_limits admin_limits(const config::settings& s, const std::vector<admin_route>& routes) {
  listener_limits l;
  l.max_body_bytes = default_body_bytes;
  l.request_timeout = request_timeout(s);
  l.max_threads = 128;
  std::vector<std::pair<std::regex, size_t>> larger;
  for (const auto& r : routes)
    if (r.max_body_bytes > default_body_bytes) {
      l.max_body_bytes = std::max(l.max_body_bytes, r.max_body_bytes);
      larger.emplace_back(std::regex(r.pattern), r.max_body_bytes);
    }
  if (!larger.empty())
    l.body_limit_for = [larger](const std::string& path) {
      size_t limit = default_body_bytes;
      for (const auto& [pattern, bytes] : larger)
        if (std::regex_match(path, pattern))
          limit = std::max(limit, bytes);
      return limit;
    };
  return l;
}

// A hook that throws counts as a failed check, never as a crash.
bool check(const std::function<bool()>& hook, const char* name) {
  if (!hook)
    return false;
  try {
    return hook();
  } catch (const std::exception& e) {
    log::warn("readiness check threw", {{"check", name}, {"error", e.what()}});
    return false;
  }
}

} // namespace

struct admin_server::impl {
  impl(const config::settings& s, admin_hooks h, std::vector<admin_route> r)
      : token(s.admin_token), hooks(std::move(h)), routes(std::move(r)),
        server(admin_limits(s, routes)) {}

  std::string token; // never logged
  admin_hooks hooks;
  std::vector<admin_route> routes;
  guarded_server server;
  std::thread thread;

  api::reply readyz() const;
  api::reply workers() const;
  std::optional<api::reply> refuse_without_token(const httplib::Request& req) const;
  void install_handlers();
};

api::reply admin_server::impl::readyz() const {
  bool db = check(hooks.database_ok, "database");
  bool core = check(hooks.core_running, "core_workers");
  const std::string body = json::writer()
                               .begin_object()
                               .member("status", db && core ? "ready" : "not_ready")
                               .key("checks")
                               .begin_object()
                               .member("database", db)
                               .member("core_workers", core)
                               .end_object()
                               .end_object()
                               .str();
  return {db && core ? 200 : 503, body, {}};
}

api::reply admin_server::impl::workers() const {
  if (!hooks.workers_json)
    return api::error_reply(api::not_found("workers view not configured"));
  try {
    return {200, hooks.workers_json(), {}};
  } catch (const std::exception& e) {
    log::warn("admin workers view failed", {{"error", e.what()}});
    return api::error_reply(api::unavailable());
  }
}

std::optional<api::reply>
admin_server::impl::refuse_without_token(const httplib::Request& req) const {
  if (token.empty())
    return api::error_reply(
        {403, "admin_disabled", "MG_ADMIN_TOKEN is not set; admin routes are disabled", {}});
  const std::string auth = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  if (auth.rfind(prefix, 0) != 0 ||
      !api::constant_time_equal(std::string_view(auth).substr(prefix.size()), token))
    return api::reply{401,
                      api::error_body({401, "unauthorized", "bearer token required", {}}),
                      {{"WWW-Authenticate", "Bearer"}}};
  return std::nullopt;
}

void admin_server::impl::install_handlers() {
  auto serve = [this](const httplib::Request& req, httplib::Response& res,
                      const std::function<api::reply()>& body, bool needs_token) {
    log::component_scope component("admin");
    const auto started = std::chrono::steady_clock::now();
    api::reply reply;
    try {
      auto refused = needs_token ? refuse_without_token(req) : std::nullopt;
      reply = refused ? *refused : body();
    } catch (const std::exception& e) {
      if (services::classify_failure(e) == services::call_failure::refused_value) {
        log::warn("admin request refused data", {{"path", req.path}, {"error", e.what()}});
        reply = api::error_reply(api::bad_request("a value in the request is not acceptable"));
      } else {
        log::error("admin request failed", {{"path", req.path}, {"error", e.what()}});
        reply = api::error_reply(internal_error());
      }
    }
    write_reply(res, reply);
    log_request(req, res.status, "", started);
  };
  server.Get("/healthz", [serve](const httplib::Request& req, httplib::Response& res) {
    serve(
        req, res,
        [] {
          return api::reply{200, "{\"status\":\"ok\"}", {}};
        },
        false);
  });
  server.Get("/readyz", [this, serve](const httplib::Request& req, httplib::Response& res) {
    serve(
        req, res, [this] { return readyz(); }, false);
  });
  server.Get("/admin/workers", [this, serve](const httplib::Request& req, httplib::Response& res) {
    serve(
        req, res, [this] { return workers(); }, true);
  });
  for (const auto& r : routes) {
    auto handler = [serve, r](const httplib::Request& req, httplib::Response& res) {
      admin_request ar;
      for (size_t i = 1; i < req.matches.size(); ++i)
        ar.params.push_back(req.matches[i]);
      for (const auto& [k, v] : req.params)
        ar.query.emplace(k, v);
      ar.body = req.body;
      ar.method = req.method;
      ar.target = req.target;
      for (const auto& [name, value] : req.headers)
        if (strcasecmp(name.c_str(), "Authorization") != 0)
          ar.headers.emplace_back(name, value);
      serve(
          req, res, [&] { return r.handle(ar); }, r.needs_token);
    };
    if (r.method == "POST")
      server.Post(r.pattern, handler);
    else if (r.method == "PUT")
      server.Put(r.pattern, handler);
    else
      server.Get(r.pattern, handler);
  }
  install_error_handlers(server);
}

admin_server::admin_server(const config::settings& settings, admin_hooks hooks,
                           std::vector<admin_route> routes)
    : impl_(std::make_unique<impl>(settings, std::move(hooks), std::move(routes))) {
  impl_->install_handlers();
}

admin_server::~admin_server() {
  stop();
}

int admin_server::start(const std::string& host_port) {
  return start_listening(impl_->server, impl_->thread, host_port, "admin");
}

void admin_server::stop() {
  stop_listening(impl_->server, impl_->thread);
}

} // namespace mg::http
