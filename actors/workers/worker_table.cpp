#include "actors/workers/worker_table.hpp"

#include <stdexcept>
#include <string>

#include "actors/workers/audit_outbox_promoter.hpp"
#include "actors/workers/callback_dispatcher.hpp"
#include "actors/workers/cex_transfer_ingest.hpp"
#include "actors/workers/cluster_lease.hpp"
#include "actors/workers/dispatch_listener.hpp"
#include "actors/workers/executor_health.hpp"
#include "actors/workers/expiration_checker.hpp"
#include "actors/workers/node_dispatcher.hpp"
#include "actors/workers/node_observer.hpp"
#include "actors/workers/node_recovery.hpp"
#include "actors/workers/reconcile_sweep.hpp"
#include "actors/workers/template_proposal_expiration.hpp"
#include "config/log.hpp"
#include "persistence/db.hpp"

namespace mg::actors {

namespace {

using config::settings;

/// How long one listener pass waits for a NOTIFY.
constexpr int listener_wait_ms = 500;

constexpr bool drains = true, no_drain = false;
constexpr bool outlives_drain = true, stops_in_drain = false;
constexpr bool backoff_within_interval = true;

bool always(const settings&) {
  return true;
}

/// The reference's sidecars and conditional workers run only where
/// MG_WORKERS_ENABLED is on; the engine's loops always do.
bool with_workers(const settings& s) {
  return s.workers_enabled;
}

/// Several dispatchers are several instances of the reference's serial
/// dispatcher (SKIP LOCKED between them); with wake-ups off there is
/// exactly one, as in the reference.
int dispatcher_count(const settings& s) {
  return s.wakeups_enabled ? s.node_dispatchers : 1;
}

std::optional<worker_pass> build_node_dispatcher(const worker_build& b) {
  return [ctx = b.ctx, links = b.links, lane = b.instance](db::connection_slot& c) {
    return workers::dispatch_pass(c, ctx->e, lane, &links->stopping);
  };
}

std::optional<worker_pass> build_node_observer(const worker_build& b) {
  // Spawned once; they stop when the observer's pass (their last owner) goes.
  auto lanes = std::make_shared<workers::observe_lanes>(
      *b.sys, b.ctx, b.ctx->settings.node_observe_concurrency - 1);
  return [ctx = b.ctx, lanes](db::connection_slot& c) {
    return workers::observe_pass(c, ctx->e, lanes.get());
  };
}

std::optional<worker_pass> build_node_recovery(const worker_build& b) {
  return [ctx = b.ctx](db::connection_slot& c) {
    return workers::recovery_pass(c, ctx->e);
  };
}

std::optional<worker_pass> build_cluster_lease(const worker_build& b) {
  return [ctx = b.ctx,
          continuity = std::make_shared<workers::lease_continuity>()](db::connection_slot& c) {
    return workers::cluster_lease_pass(c, ctx->e, ctx->suspects, *continuity);
  };
}

std::optional<worker_pass> build_reconcile_sweep(const worker_build& b) {
  return [ctx = b.ctx](db::connection_slot& c) {
    return workers::reconcile_sweep_pass(c, ctx->e);
  };
}

std::optional<worker_pass> build_dispatch_listener(const worker_build& b) {
  auto listener = std::make_shared<workers::dispatch_listener>(b.ctx->settings.database_url,
                                                               db::api_application_name());
  return [listener](db::connection_slot&) {
    return listener->pass(listener_wait_ms);
  };
}

std::optional<worker_pass> build_expiration_checker(const worker_build& b) {
  return [ctx = b.ctx](db::connection_slot& c) {
    return workers::expiration_pass(c, ctx->settings);
  };
}

std::optional<worker_pass> build_template_proposal_expiration(const worker_build&) {
  return [](db::connection_slot& c) {
    return workers::proposal_expiration_pass(c);
  };
}

std::optional<worker_pass> build_executor_health(const worker_build& b) {
  return [ctx = b.ctx](db::connection_slot& c) {
    return workers::executor_health_pass(c, ctx->providers, ctx->settings.runtime_node);
  };
}

std::optional<worker_pass> build_audit_outbox_promoter(const worker_build&) {
  return [](db::connection_slot& c) {
    return workers::audit_promotion_pass(c);
  };
}

std::optional<worker_pass> build_callback_dispatcher(const worker_build& b) {
  // Always on (the reference). Unsigned callbacks are never sent: without a
  // secret each pass sends nothing and says why in the heartbeat; the rows
  // wait in the outbox (nothing lost) until a process with one delivers them.
  if (b.ctx->settings.callback_secret.empty())
    log::warn("callback_dispatcher sends nothing: MG_CALLBACK_SECRET is not set");
  auto callbacks = std::make_shared<workers::callback_dispatcher>(b.ctx->settings);
  return [callbacks](db::connection_slot& c) {
    return callbacks->pass(c);
  };
}

const std::vector<worker_declaration> table = {
    // The engine (SPEC §1): core, on in every process.
    {"node_dispatcher", worker_group::core, &settings::node_dispatch_interval_seconds, drains,
     always, build_node_dispatcher, worker_link::dispatcher, dispatcher_count, stops_in_drain,
     db::plan_choice::generic},
    {"node_observer", worker_group::core, &settings::node_observe_interval_seconds, drains, always,
     build_node_observer, worker_link::observer, nullptr, stops_in_drain, db::plan_choice::generic},
    {"node_recovery", worker_group::core, &settings::node_recovery_interval_seconds, drains, always,
     build_node_recovery, worker_link::recovery, nullptr, stops_in_drain, db::plan_choice::generic},
    // Core: a process whose lease was taken must stop (fail fast). It
    // outlives the drain so no peer takes this node's claims over while
    // their submits may still answer. Its renewals resume at their own pace
    // once the database is back: a peer that reconnected first takes this
    // process over a lease later, and a full error backoff (up to 60 s)
    // would outlast any lease.
    {"cluster_lease", worker_group::core, &settings::cluster_lease_renew_seconds, no_drain, always,
     build_cluster_lease, worker_link::lease, nullptr, outlives_drain, db::plan_choice::generic,
     backoff_within_interval},
    {"reconcile_sweep", worker_group::core, &settings::reconcile_interval_seconds, drains, always,
     build_reconcile_sweep, worker_link::none, nullptr, stops_in_drain, db::plan_choice::generic},
    {"dispatch_listener", worker_group::sidecar, nullptr, drains,
     [](const settings& s) { return s.wakeups_enabled; }, build_dispatch_listener,
     worker_link::none, nullptr, stops_in_drain, db::plan_choice::generic},
    // The reference's always-on sidecars.
    {"expiration_checker", worker_group::sidecar, &settings::expiration_check_interval_seconds,
     drains, with_workers, build_expiration_checker},
    {"template_proposal_expiration", worker_group::sidecar,
     &settings::template_proposal_expiration_interval_seconds, drains, with_workers,
     build_template_proposal_expiration},
    // Every pass checks every provider, so "processed" is never 0: no drain.
    {"executor_health", worker_group::sidecar, &settings::executor_health_interval_seconds,
     no_drain, with_workers, build_executor_health},
    {"audit_outbox_promoter", worker_group::sidecar,
     &settings::audit_outbox_promoter_interval_seconds, drains, with_workers,
     build_audit_outbox_promoter},
    {"callback_dispatcher", worker_group::sidecar, &settings::callback_dispatch_interval_seconds,
     drains, with_workers, build_callback_dispatcher},
    // The reference's conditional workers, each behind its own flag. The
    // two reapers are core: one that dies takes the process down (reference
    // §11) rather than leave stranded work unreaped unnoticed.
    {"evm_nonce_reaper", worker_group::core, &settings::evm_nonce_reaper_interval_seconds, drains,
     [](const settings& s) { return s.workers_enabled && s.evm_nonce_reaper_enabled; },
     build_evm_nonce_reaper},
    {"ccip_stranded_reaper", worker_group::core, &settings::ccip_stranded_reaper_interval_seconds,
     drains, [](const settings& s) { return s.workers_enabled && s.ccip_stranded_reaper_enabled; },
     build_ccip_stranded_reaper},
    {"capital_transfer_followup", worker_group::sidecar,
     &settings::capital_transfer_followup_interval_seconds, drains,
     [](const settings& s) { return s.workers_enabled && s.capital_transfer_followup_enabled; },
     build_capital_transfer_followup},
    {"notification_dispatcher", worker_group::sidecar, &settings::notify_interval_seconds, drains,
     [](const settings& s) { return s.workers_enabled && s.notify_enabled; },
     build_notification_dispatcher},
    // One pass covers every changed hour: nothing is left to drain.
    {"balance_history_rollup", worker_group::sidecar, &settings::balance_history_interval_seconds,
     no_drain, [](const settings& s) { return s.workers_enabled && s.balance_history_enabled; },
     build_balance_history_rollup},
    // No boolean flag: the venue list turns it on.
    {"cex_transfer_ingest", worker_group::sidecar, &settings::cex_transfer_ingest_interval_seconds,
     drains,
     [](const settings& s) {
       return s.workers_enabled &&
              !workers::parse_venue_csv(s.cex_transfer_ingest_venues_csv).empty();
     },
     build_cex_transfer_ingest},
    // Every pass appends rows, so draining would spin: no drain.
    {"balance_snapshot", worker_group::sidecar, &settings::balance_snapshot_interval_seconds,
     no_drain, [](const settings& s) { return s.workers_enabled && s.balance_snapshot_enabled; },
     build_balance_snapshot},
    // Every poll records every item: no drain.
    {"ccip_drift", worker_group::sidecar, &settings::ccip_drift_poll_interval_seconds, no_drain,
     [](const settings& s) { return s.workers_enabled && s.ccip_enabled; }, build_ccip_drift},
    // Every pass checks everything: no drain.
    {"verify_drift", worker_group::sidecar, &settings::verify_drift_interval_seconds, no_drain,
     [](const settings& s) { return s.workers_enabled && s.verify_drift_enabled; },
     build_verify_drift},
};

domain::loop_policy policy_of(const worker_declaration& d, const settings& s) {
  if (!d.interval)
    return {domain::loop_min_delay_seconds, 0, d.drain};
  domain::loop_policy p{s.*d.interval, s.worker_jitter_seconds, d.drain};
  if (d.backoff_within_interval)
    p.max_error_backoff_seconds = p.interval_seconds;
  return p;
}

std::string instance_name(const worker_declaration& d, int instance) {
  return instance == 0 ? d.name : std::string(d.name) + "_" + std::to_string(instance + 1);
}

} // namespace

const std::vector<worker_declaration>& worker_table() {
  return table;
}

const worker_declaration& declared_worker(std::string_view name) {
  for (auto& d : table)
    if (name == d.name)
      return d;
  throw std::out_of_range("no worker named " + std::string(name));
}

worker_spec spec_of(const worker_declaration& d, const settings& s, worker_pass pass,
                    int instance) {
  worker_spec spec{instance_name(d, instance), d.group, policy_of(d, s), std::move(pass)};
  if (d.link == worker_link::dispatcher)
    spec.busy = std::make_shared<std::atomic<bool>>(false);
  spec.outlives_drain = d.outlives_drain;
  spec.plans = d.plans;
  spec.link = d.link;
  return spec;
}

std::vector<worker_spec> make_workers(const worker_build& b) {
  const auto& s = b.ctx->settings;
  std::vector<worker_spec> specs;
  for (auto& d : table) {
    if (!d.gate(s))
      continue;
    int count = d.instances ? d.instances(s) : 1;
    for (int i = 0; i < count; ++i) {
      auto one = b;
      one.instance = i;
      if (auto pass = d.make(one))
        specs.push_back(spec_of(d, s, std::move(*pass), i));
    }
  }
  return specs;
}

std::optional<worker_spec> make_worker(std::string_view name, const worker_build& b) {
  const auto& d = declared_worker(name);
  if (!d.gate(b.ctx->settings))
    return std::nullopt;
  auto pass = d.make(b);
  if (!pass)
    return std::nullopt;
  return spec_of(d, b.ctx->settings, std::move(*pass));
}

std::optional<worker_spec> make_worker(std::string_view name,
                                       const std::shared_ptr<workers::engine_context>& ctx) {
  return make_worker(name, worker_build{ctx});
}

std::optional<worker_pass> skipped(const char* worker, const char* needs) {
  log::warn("conditional worker skipped: its client is not configured",
            {{"worker", worker}, {"needs", needs}});
  return std::nullopt;
}

} // namespace mg::actors
