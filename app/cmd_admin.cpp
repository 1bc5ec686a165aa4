// migrate, templates load, serve.
#include <iostream>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#include "actors/cluster/movement_api.hpp"
#include "actors/cluster/movement_client.hpp"
#include "actors/cluster/peer_watch.hpp"
#include "actors/cluster/remote_providers.hpp"
#include "actors/runtime.hpp"
#include "actors/runtime_status.hpp"
#include "actors/system_config.hpp"
#include "app/common.hpp"
#include "config/log.hpp"
#include "executors/registry.hpp"
#include "http/front_doors.hpp"
#include "persistence/cluster_store.hpp"
#include "persistence/db.hpp"
#include "persistence/migrate.hpp"

namespace mg::app {

int cmd_migrate(const args&) {
  auto s = load_settings_or_exit();
  std::cout << "migrate: migrations from " << db::migrations_dir() << std::endl;
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
  int have = db::schema_version(url);
  if (have < latest)
    throw std::runtime_error("database schema is at version " + std::to_string(have) +
                             ", this build needs " + std::to_string(latest) +
                             ": run `movegate migrate` first");
}

/// Connections to the other processes; a dropped one makes cluster_lease
/// look at that peer's lease early.
actors::peer_watch_actor watch_peers(caf::actor_system& sys, actors::runtime& rt) {
  auto& s = rt.settings();
  return actors::spawn_peer_watch(
      sys, {s.database_url, s.runtime_node, s.cluster_lease_seconds, s.cluster_lease_renew_seconds},
      {[&rt](const std::string& peer) { rt.peer_connected(peer); },
       [&rt](const std::string& peer) {
         rt.peer_connection_lost(peer);
       }});
}

/// Leaving cmd_serve ends its actor system, which waits for every actor and
/// detached thread. CAF 0.17 can keep a reference to an actor the
/// middleman has seen and wait for ever; by then everything durable is
/// committed and the cluster left, so a stuck end is cut after `grace`.
void exit_anyway_after(std::chrono::seconds grace, int code) {
  std::thread([grace, code] {
    std::this_thread::sleep_for(grace);
    log::warn("actor system did not stop in time; exiting anyway",
              {{"grace_seconds", static_cast<int64_t>(grace.count())}, {"exit_code", code}});
    std::_Exit(code);
  }).detach();
}

constexpr std::chrono::seconds shutdown_grace{10};

} // namespace

/// Without workers (MG_WORKERS_ENABLED=false) only the front doors run,
/// until SIGINT/SIGTERM.
int serve_front_doors_only(const config::settings& s, db::plan_cache& plans,
                           const domain::provider_registry& providers) {
  caf::actor_system_config cfg;
  actors::configure(cfg);
  cluster::configure(cfg, actors::cluster_tls_files(s));
  caf::actor_system sys{cfg};
  http::front_doors doors(s, plans, &providers,
                          {[](const std::string&, domain::request_change) {}, [] { return "[]"; },
                           [] {
                             return false;
                           }});
  try {
    doors.start();
    doors.start_cluster(sys);
  } catch (const std::exception& e) {
    log::error("listener failed to start", {{"error", e.what()}});
    doors.stop();
    return 1;
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  int sig = 0;
  sigwait(&set, &sig);
  log::info("movegate serve stopping", {{"signal", sig}});
  doors.stop();
  exit_anyway_after(shutdown_grace, 0);
  return 0;
}

int cmd_serve(const args&) {
  auto s = load_settings_or_exit();
  // Off loopback the cluster door needs mutual TLS (SPEC §8, issue 6).
  if (auto refusal = actors::cluster_door_refusal(s); !refusal.empty()) {
    log::error("refusing to start", {{"error", refusal}});
    std::cerr << "movegate serve: " << refusal << std::endl;
    return 1;
  }
  actors::block_shutdown_signals();
  require_schema(s.database_url);
  log::info("movegate serve starting", {{"network_class", s.network_class},
                                        {"workers_enabled", s.workers_enabled},
                                        {"wakeups_enabled", s.wakeups_enabled}});
  auto providers = executors::configured_providers(s);
  // Siblings may offer providers over the cluster door; local keys win.
  providers.remote = actors::remote_providers(providers, s.executor_timeout_seconds);
  if (!s.workers_enabled) {
    db::plan_cache plans;
    return serve_front_doors_only(s, plans, providers);
  }
  caf::actor_system_config cfg;
  actors::configure(cfg);
  cluster::configure(cfg, actors::cluster_tls_files(s));
  caf::actor_system sys{cfg};
  actors::runtime rt(sys, s, providers);
  // Set once the runtime runs: before that (waiting out a holder's lease)
  // the admin listener may already answer, and the runtime is not ready.
  std::atomic<bool> started{false};
  auto supervision = [&sys, &rt, &started] {
    return started ? actors::supervision_json(sys, rt) : std::string("[]");
  };
  http::front_doors doors(rt.settings(), rt.plans(), &rt.engine().providers,
                          {[&rt](const std::string& id, domain::request_change change) {
                             rt.notify_changed(id, change);
                           },
                           supervision,
                           [supervision] {
                             return actors::core_group_running(supervision());
                           }});
  // The listeners open only once this process may work under its name
  // (the admin one earlier while it waits for a holder's lease); if one
  // cannot bind, the runtime is stopped cleanly and serve exits 1.
  bool doors_failed = false;
  actors::peer_watch_actor peers;
  auto open_admin_while_waiting = [&] {
    try {
      doors.start_admin();
    } catch (const std::exception& e) {
      log::warn("admin listener failed to start while waiting", {{"error", e.what()}});
    }
  };
  auto open_doors = [&] {
    started = true;
    try {
      doors.start();
      int port = doors.start_cluster(sys);
      auto conn = db::connect(rt.settings().database_url);
      db::record_cluster_port(*conn, rt.settings().runtime_node, port);
      peers = watch_peers(sys, rt);
    } catch (const std::exception& e) {
      log::error("listener failed to start", {{"error", e.what()}});
      doors_failed = true;
      rt.shutdown();
    }
  };
  auto stopped = actors::run_until_stopped(sys, rt, open_doors, open_admin_while_waiting);
  actors::stop_peer_watch(sys, peers);
  doors.stop();
  int code = doors_failed ? 1 : stopped.exit_code;
  // A worker still inside its pass keeps the actor system waiting for as
  // long as its provider call lasts: the drain bound was the wait for it.
  exit_anyway_after(stopped.drained ? shutdown_grace : std::chrono::seconds(0), code);
  return code;
}

} // namespace mg::app
