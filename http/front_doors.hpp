#pragma once
// One process's front doors: the /v3 API on MG_HTTP_ADDR and the admin
// listener on MG_ADMIN_ADDR, with the connection pool and services behind
// them. `serve` and the end-to-end tests start them the same way.
#include <functional>
#include <memory>
#include <string>

#include "actors/protocol.hpp"
#include "config/settings.hpp"
#include "domain/api_auth.hpp"
#include "domain/executor.hpp"
#include "services/balance_service.hpp"
#include "services/catalog_service.hpp"
#include "services/movement_service.hpp"

namespace mg::http {

class api_server;
class admin_server;

struct front_door_hooks {
  /// A request changed in this process (runtime::notify_changed).
  std::function<void(const std::string& request_id, domain::request_change)> request_changed;
  /// The supervision tree as JSON (supervisor status); "[]" without workers.
  std::function<std::string()> supervision_json;
  /// Every core worker is running (readiness).
  std::function<bool()> core_running;
};

class front_doors {
public:
  /// Reads MG_API_KEYS_FILE (throws std::runtime_error naming the problem,
  /// never a secret). `plans` and `providers` are the runtime's.
  front_doors(const config::settings& settings, db::plan_cache& plans,
              const domain::provider_registry* providers, front_door_hooks hooks);
  ~front_doors();

  /// Binds both listeners (port 0 picks one), the admin one unless
  /// start_admin already did; throws on failure.
  void start();
  /// Binds the admin listener alone, for a process that must wait before
  /// it may serve (/healthz 200, /readyz 503 meanwhile).
  void start_admin();
  /// Publishes the movement_api actor on MG_CLUSTER_ADDR (SPEC §8) in
  /// `sys` (its config went through cluster::configure) and
  /// returns the bound port; throws std::runtime_error on failure.
  int start_cluster(caf::actor_system& sys);
  /// Stops the cluster front door (and its sessions) and both listeners.
  void stop();

  int api_port() const { return api_port_; }
  int admin_port() const { return admin_port_; }
  int cluster_port() const { return cluster_port_; }

private:
  const config::settings& settings_;
  front_door_hooks hooks_;
  std::unique_ptr<db::connection_pool> pool_;
  std::unique_ptr<services::service_context> ctx_;
  std::unique_ptr<services::movement_service> movements_;
  std::unique_ptr<services::catalog_service> catalog_;
  std::unique_ptr<services::balance_service> balances_;
  std::unique_ptr<api_server> api_;
  std::unique_ptr<admin_server> admin_;
  std::vector<api::api_key> keys_;
  caf::actor_system* cluster_sys_ = nullptr;
  actors::movement_api_actor cluster_api_;
  int api_port_ = 0;
  int admin_port_ = 0;
  bool admin_started_ = false;
  int cluster_port_ = 0;
};

} // namespace mg::http
