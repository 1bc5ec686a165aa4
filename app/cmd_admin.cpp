// migrate, templates load, serve.
#include <iostream>

#include "actors/runtime.hpp"
#include "actors/system_config.hpp"
#include "app/common.hpp"
#include "config/log.hpp"
#include "executors/sim.hpp"
#include "persistence/db.hpp"
#include "persistence/migrate.hpp"

namespace mg::app {

int cmd_migrate(const args&) {
  auto s = load_settings_or_exit();
  db::migrate(s.database_url, db::bundled_migrations(),
              [](const std::string& line) { std::cout << "migrate: " << line << std::endl; });
  return 0;
}

int cmd_templates(const args& a) {
  if (a.size() != 2 || a[0] != "load") {
    std::cerr << "usage: movegate templates load DIR\n";
    return 2;
  }
  auto s = load_settings_or_exit();
  int n = load_templates(s.database_url, a[1], true);
  std::cout << n << " new template version(s)\n";
  return 0;
}

namespace {

/// serve does not migrate by itself: refuse to run on an older schema.
void require_schema(const std::string& url) {
  auto latest = db::bundled_migrations().back().version;
  auto conn = db::connect(url);
  pqxx::nontransaction tx(*conn);
  auto r = tx.exec("SELECT to_regclass('schema_migrations') IS NOT NULL");
  int have = 0;
  if (r[0][0].as<bool>())
    have = tx.exec("SELECT COALESCE(max(version), 0) FROM schema_migrations")[0][0].as<int>();
  if (have < latest)
    throw std::runtime_error("database schema is at version " + std::to_string(have) +
                             ", this build needs " + std::to_string(latest) +
                             ": run `movegate migrate` first");
}

} // namespace

int cmd_serve(const args&) {
  auto s = load_settings_or_exit();
  actors::block_shutdown_signals();
  require_schema(s.database_url);
  log::info("movegate serve starting", {{"runtime_node", s.runtime_node},
                                        {"network_class", s.network_class},
                                        {"workers_enabled", s.workers_enabled},
                                        {"wakeups_enabled", s.wakeups_enabled}});
  if (!s.workers_enabled) {
    log::warn("MG_WORKERS_ENABLED=false and the HTTP API is not part of this build yet:"
              " nothing to run");
    return 0;
  }
  caf::actor_system_config cfg;
  actors::configure(cfg);
  caf::actor_system sys{cfg};
  actors::runtime rt(sys, s, executors::builtin_providers(s.database_url));
  return actors::run_until_stopped(sys, rt);
}

} // namespace mg::app
