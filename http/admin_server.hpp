#pragma once
// The admin listener (SPEC §5: separate port, loopback by default).
// GET /healthz → 200 {"status":"ok"}; GET /readyz → 200 when the database
// answers and the core workers run, else 503 naming the failed checks;
// both need no token. Every other route needs `Authorization: Bearer
// <MG_ADMIN_TOKEN>` (compared in constant time): a missing or wrong token
// answers 401; when MG_ADMIN_TOKEN is empty the protected routes are
// disabled and answer 403 "admin_disabled" whatever the caller sends.
#include <functional>
#include <memory>
#include <string>

#include "config/settings.hpp"

namespace mg::http {

struct admin_hooks {
  std::function<bool()> database_ok;
  std::function<bool()> core_running;
  /// A JSON document (e.g. db::worker_heartbeats_json's array).
  std::function<std::string()> workers_json;
};

class admin_server {
public:
  admin_server(const config::settings& settings, admin_hooks hooks);
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
