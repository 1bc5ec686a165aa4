#pragma once
// The admin listener (SPEC §5: separate port, loopback by default).
// GET /healthz → 200 {"status":"ok"}; GET /readyz → 200 when the database
// answers and the core workers run, else 503 naming the failed checks;
// both need no token. Every other route needs `Authorization: Bearer
// <MG_ADMIN_TOKEN>` (compared in constant time): a missing or wrong token
// answers 401; when MG_ADMIN_TOKEN is empty the protected routes are
// disabled and answer 403 "admin_disabled" whatever the caller sends.
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "domain/api.hpp"

namespace mg::http {

struct admin_hooks {
  std::function<bool()> database_ok;
  std::function<bool()> core_running;
  /// A JSON document (e.g. services::worker_heartbeats_json's array).
  std::function<std::string()> workers_json;
};

/// What an admin route handler gets.
struct admin_request {
  std::vector<std::string> params;               // regex captures of the pattern
  std::multimap<std::string, std::string> query; // decoded
  std::string body;
  std::string method;
  std::string target; // path and query exactly as sent
  /// Every header but Authorization (the admin token stays with the listener).
  std::vector<std::pair<std::string, std::string>> headers;
};

/// A route a feature adds to the admin listener (callbacks, metrics, the
/// inspection page…). Set a Content-Type header in the reply for anything
/// that is not JSON.
struct admin_route {
  std::string method;  // GET, POST or PUT
  std::string pattern; // httplib regex over the path, e.g. "/admin/callbacks/([^/]+)/redeliver"
  bool needs_token = true;
  std::function<api::reply(const admin_request&)> handle;
  /// The largest body the route takes (the listener's default is 64 KiB).
  size_t max_body_bytes = 64 * 1024;
};

class admin_server {
public:
  admin_server(const config::settings& settings, admin_hooks hooks,
               std::vector<admin_route> routes = {});
  ~admin_server();

  /// Binds `host:port` (port 0 picks a free one), serves on a thread of its
  /// own and returns the bound port; throws std::runtime_error on failure.
  int start(const std::string& host_port);
  void stop();

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace mg::http
