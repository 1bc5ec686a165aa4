#pragma once
// Every worker a process can run, declared once: its name, supervision
// group, interval setting, gate and maker (reference "Worker catalogue",
// "Always-on vs conditional" and "Supervision semantics"). The runtime
// spawns what the table allows; the supervisor reads each worker's group
// and link from the spec built here, never from its name.
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "actors/loop_runner.hpp"
#include "actors/workers/engine.hpp"
#include "config/settings.hpp"

namespace caf {
class actor_system;
}

namespace mg::actors {

/// What a maker may use to build its worker's pass.
struct worker_build {
  std::shared_ptr<workers::engine_context> ctx;
  /// The engine's own workers need these (observe lanes, the dispatchers'
  /// stop flag); the other makers leave them alone.
  caf::actor_system* sys = nullptr;
  std::shared_ptr<runtime_links> links{};
  /// Which instance of a worker with several (dispatchers), from 0.
  int instance = 0;
};

using worker_pass = std::function<workers::pass_result(db::connection_slot&)>;

/// Builds a worker's pass once its gate is open; nullopt: the worker is on
/// but a client it needs is not configured (the maker logged skipped()).
using worker_maker = std::optional<worker_pass> (*)(const worker_build&);

struct worker_declaration {
  const char* name;
  worker_group group;
  /// The setting holding its interval; null: passes run back to back
  /// (the pass itself waits, as the dispatch listener does).
  double config::settings::*interval;
  /// A pass that processed something is followed at once (SPEC §1).
  bool drain;
  /// Whether this process runs the worker at all.
  bool (*gate)(const config::settings&);
  worker_maker make;
  worker_link link = worker_link::none;
  /// Instances to run (named name, name_2, …); null: one.
  int (*instances)(const config::settings&) = nullptr;
  /// See worker_spec::outlives_drain.
  bool outlives_drain = false;
  db::plan_choice plans = db::plan_choice::automatic;
  /// Its error backoff never sleeps longer than its interval: its passes
  /// must resume soon after an outage.
  bool backoff_within_interval = false;
};

/// The whole catalogue, in the order the runtime starts it.
const std::vector<worker_declaration>& worker_table();

/// The declaration named `name`; throws std::out_of_range for no such worker.
const worker_declaration& declared_worker(std::string_view name);

/// A spec for `d` running `pass`, with the interval and jitter of `s`.
worker_spec spec_of(const worker_declaration& d, const config::settings& s, worker_pass pass,
                    int instance = 0);

/// Every worker whose gate is open in b.ctx->settings and that could be
/// built, in table order.
std::vector<worker_spec> make_workers(const worker_build& b);

/// The first instance of the named worker, or nullopt when its gate is
/// closed or its maker skipped it.
std::optional<worker_spec> make_worker(std::string_view name, const worker_build& b);
std::optional<worker_spec> make_worker(std::string_view name,
                                       const std::shared_ptr<workers::engine_context>& ctx);

/// Logs the one warning line of a worker that is on but cannot run, and
/// returns nullopt (for makers: `return skipped("x", "a y client");`).
std::optional<worker_pass> skipped(const char* worker, const char* needs);

// The makers that live with their worker's pass, each in its own file.
std::optional<worker_pass> build_evm_nonce_reaper(const worker_build&);
std::optional<worker_pass> build_ccip_stranded_reaper(const worker_build&);
std::optional<worker_pass> build_capital_transfer_followup(const worker_build&);
std::optional<worker_pass> build_notification_dispatcher(const worker_build&);
std::optional<worker_pass> build_balance_history_rollup(const worker_build&);
std::optional<worker_pass> build_cex_transfer_ingest(const worker_build&);
std::optional<worker_pass> build_balance_snapshot(const worker_build&);
std::optional<worker_pass> build_ccip_drift(const worker_build&);
std::optional<worker_pass> build_verify_drift(const worker_build&);

} // namespace mg::actors
