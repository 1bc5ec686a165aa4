#include "http/front_doors.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "actors/cluster/movement_api.hpp"
#include "config/log.hpp"
#include "domain/json_writer.hpp"
#include "executors/balance_fetchers.hpp"
#include "http/admin_page.hpp"
#include "http/admin_server.hpp"
#include "http/admin_views.hpp"
#include "http/api_relay.hpp"
#include "http/api_server.hpp"
#include "http/callback_admin.hpp"
#include "http/metrics_route.hpp"
#include "http/openapi.hpp"
#include "http/routes.hpp"
#include "services/api_pool.hpp"
#include "services/health_service.hpp"

namespace mg::http {

namespace {

std::vector<api::api_key> read_api_keys(const std::string& path) {
  if (path.empty()) {
    log::warn("MG_API_KEYS_FILE is not set: every /v3 call will be refused (401)");
    return {};
  }
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("MG_API_KEYS_FILE: cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    return api::parse_api_keys(text.str());
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string("MG_API_KEYS_FILE: ") + e.what());
  }
}

/// GET /v3/balances over the venues MG_GATEWAY_API_URL configures; a URL
/// that is not http(s) leaves fresh=true answering 503 instead of keeping
/// the API down.
std::unique_ptr<services::balance_service> balance_service_for(services::service_context& ctx) {
  try {
    return std::make_unique<services::balance_service>(
        ctx, executors::make_balance_fetchers(ctx.settings));
  } catch (const std::invalid_argument&) {
    log::warn("GET /v3/balances?fresh=true cannot fetch: MG_GATEWAY_API_URL is not http(s)");
    return std::make_unique<services::balance_service>(ctx, domain::balance_fetcher_registry{},
                                                       "MG_GATEWAY_API_URL is not an http(s) URL");
  }
}

} // namespace

front_doors::front_doors(const config::settings& settings, db::plan_cache& plans,
                         const domain::provider_registry* providers, front_door_hooks hooks)
    : settings_(settings), hooks_(std::move(hooks)) {
  pool_ = services::open_api_pool(settings);
  ctx_.reset(
      new services::service_context{*pool_, settings_, plans, hooks_.request_changed, providers});
  movements_ = std::make_unique<services::movement_service>(*ctx_);
  catalog_ = std::make_unique<services::catalog_service>(*ctx_);
  balances_ = balance_service_for(*ctx_);
  keys_ = read_api_keys(settings.api_keys_file);
  api_ = std::make_unique<api_server>(settings_, keys_, *ctx_,
                                      v3_routes(*movements_, *catalog_, *balances_));
  api_->serve_static("/openapi.json", "application/json", openapi_document()); // no auth
  admin_hooks ah;
  ah.database_ok = [this] {
    return services::database_accepts_writes(*pool_);
  };
  ah.core_running = [this] {
    return hooks_.core_running ? hooks_.core_running() : false;
  };
  ah.workers_json = [this] {
    return json::writer()
        .begin_object()
        .key("supervision")
        .raw(hooks_.supervision_json ? hooks_.supervision_json() : std::string("[]"))
        .key("heartbeats")
        .raw(services::worker_heartbeats_json(*pool_))
        .end_object()
        .str();
  };
  // Routes features add to the admin listener (each from its own file).
  std::vector<admin_route> admin_routes;
  for (auto& r : admin_view_routes(*ctx_)) // the inspection page's data
    admin_routes.push_back(std::move(r));
  for (auto& r : admin_page_routes()) // GET / and its assets
    admin_routes.push_back(std::move(r));
  for (auto& r : api_relay_routes(*api_)) // /relay/v3/...: the page's signed calls
    admin_routes.push_back(std::move(r));
  admin_routes.push_back(metrics_route(*ctx_)); // GET /metrics
  for (auto& r : callback_admin_routes(*ctx_))  // GET /admin/callbacks, POST …/redeliver
    admin_routes.push_back(std::move(r));
  admin_ = std::make_unique<admin_server>(settings_, std::move(ah), std::move(admin_routes));
}

front_doors::~front_doors() {
  stop();
}

void front_doors::start() {
  api_port_ = api_->start(settings_.http_addr);
  start_admin();
}

void front_doors::start_admin() {
  if (admin_started_)
    return;
  admin_port_ = admin_->start(settings_.admin_addr);
  admin_started_ = true;
}

int front_doors::start_cluster(caf::actor_system& sys) {
  auto door = std::make_shared<actors::cluster_door>(
      *movements_, *pool_, keys_,
      [this](const std::string& key_id) { return api_->rate_limit(key_id); },
      settings_.cluster_max_sessions_per_key);
  cluster_api_ = actors::spawn_movement_api(sys, std::move(door));
  cluster_sys_ = &sys;
  cluster_port_ = actors::publish_movement_api(sys, cluster_api_, settings_.cluster_addr);
  log::info("cluster front door listening",
            {{"addr", settings_.cluster_addr}, {"port", cluster_port_}});
  return cluster_port_;
}

void front_doors::stop() {
  if (cluster_sys_)
    actors::stop_movement_api(*cluster_sys_, cluster_api_);
  cluster_sys_ = nullptr;
  if (api_)
    api_->stop();
  if (admin_)
    admin_->stop();
}

} // namespace mg::http
