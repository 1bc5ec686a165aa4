#include "actors/runtime.hpp"

#include <chrono>
#include <csignal>
#include <optional>

#include "actors/request_writer.hpp"
#include "actors/runtime_status.hpp"
#include "actors/workers/worker_table.hpp"
#include "config/log.hpp"
#include "persistence/cluster_store.hpp"
#include "persistence/db.hpp"
#include "persistence/heartbeat_store.hpp"

namespace mg::actors {

namespace {

/// Beyond the executor timeout: the result commit of the last answer.
constexpr double drain_margin_seconds = 5;

/// How often run_until_stopped looks for a stop signal.
constexpr auto signal_poll = std::chrono::milliseconds(50);

} // namespace

runtime::runtime(caf::actor_system& sys, config::settings settings,
                 domain::provider_registry providers)
    : sys_(sys),
      ctx_(std::make_shared<workers::engine_context>(std::move(settings), std::move(providers))),
      links_(std::make_shared<runtime_links>()) {}

void runtime::start(caf::actor waiter, std::vector<worker_spec> extra) {
  auto& s = ctx_->settings;
  auto specs = make_workers({ctx_, &sys_, links_});
  for (auto& w : extra)
    specs.push_back(std::move(w));
  {
    std::vector<std::string> names, groups;
    for (auto& w : specs) {
      names.push_back(w.name);
      groups.push_back(to_string(w.group));
    }
    // Before any worker claims anything under this name.
    if (!joined_)
      claim_name({});
    auto conn = db::connect(s.database_url);
    db::seed_heartbeats(*conn, names, groups, s.runtime_node, s.network_class);
  }
  std::vector<request_writer_actor> writers;
  std::vector<fixed_member> fixed;
  for (int i = 0; i < s.db_pool_size; ++i) {
    auto w =
        sys_.spawn<caf::detached>(request_writer, ctx_, s.database_url, links_, s.wakeups_enabled);
    writers.push_back(w);
    fixed.push_back({"request_writer_" + std::to_string(i), caf::actor_cast<caf::actor>(w)});
  }
  links_->registry = sys_.spawn(movement_registry, writers);
  ctx_->sink = std::make_shared<registry_sink>(sys_, links_->registry);
  ctx_->e.results = ctx_->sink.get();
  for (auto& id : handed_over_requests_)
    caf::anon_send(links_->registry, changed_atom::value, id);
  handed_over_requests_.clear();
  fixed.push_back({"movement_registry", caf::actor_cast<caf::actor>(links_->registry)});
  worker_env env{s.database_url, s.runtime_node, s.network_class, s.wakeups_enabled, links_};
  supervisor_ = sys_.spawn(mg::actors::supervisor, std::move(specs), env, std::move(fixed), waiter,
                           default_supervisor_hooks());
}

bool runtime::claim_name(const name_wait& wait) {
  auto claim = claim_runtime_node(ctx_->settings, wait);
  if (!claim)
    return false;
  joined_ = true;
  if (claim->handed_over) {
    auto& h = *claim->handed_over;
    log::warn("took this runtime node over from its previous holder",
              {{"reason", claim->reason},
               {"sent_to_recovery", h.sent_to_recovery},
               {"refenced", h.refenced}});
    handed_over_requests_ = h.requests;
  }
  return true;
}

void runtime::notify_changed(const std::string& request_id, domain::request_change change) {
  if (!change.reconciled)
    caf::anon_send(links_->registry, changed_atom::value, request_id);
  if (!ctx_->settings.wakeups_enabled)
    return;
  if (change.ready_nodes)
    links_->wake_dispatchers_for(static_cast<size_t>(std::max(0, *change.ready_nodes)));
  else
    links_->wake_dispatchers();
}

void runtime::peer_connection_lost(const std::string& runtime_node) {
  ctx_->suspects.add(runtime_node);
  if (links_->lease)
    caf::anon_send(links_->lease, wake_atom::value);
}

void runtime::peer_connected(const std::string& runtime_node) {
  ctx_->suspects.remove(runtime_node);
}

runtime::~runtime() {
  if (shutdown_asked_)
    leave_cluster();
}

void runtime::leave_cluster() {
  if (!joined_)
    return;
  joined_ = false;
  auto& s = ctx_->settings;
  try {
    auto conn = db::connect(s.database_url);
    db::leave_cluster(*conn, s.runtime_node);
  } catch (const std::exception& ex) {
    // The lease then simply expires; a survivor finds nothing claimed.
    log::warn("could not leave the cluster", {{"error", ex.what()}});
  }
}

void runtime::shutdown() {
  shutdown_asked_ = true;
  links_->stopping = true;
  if (supervisor_)
    caf::anon_send(supervisor_, shutdown_atom::value);
}

void block_shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

namespace {

/// Waits up to `seconds` for SIGINT/SIGTERM (blocked in every thread).
bool stop_signal_within(double seconds) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  auto ns = static_cast<long long>(seconds * 1e9);
  timespec wait{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  return sigtimedwait(&set, nullptr, &wait) > 0;
}

} // namespace

double drain_bound_seconds(const config::settings& s) {
  return s.executor_timeout_seconds + drain_margin_seconds;
}

stop_outcome run_until_stopped(caf::actor_system& sys, runtime& rt,
                               const std::function<void()>& on_started,
                               const std::function<void()>& on_waiting) {
  if (!rt.claim_name({on_waiting, [](double seconds) {
                        return !stop_signal_within(seconds);
                      }})) {
    log::info("stopped while waiting for this runtime node's lease");
    return {};
  }
  caf::scoped_actor self{sys};
  rt.start(caf::actor_cast<caf::actor>(self));
  if (on_started)
    on_started();
  const auto bound = std::chrono::duration<double>(drain_bound_seconds(rt.settings()));
  std::optional<std::chrono::steady_clock::time_point> stop_by;
  stop_outcome out{-1, true};
  while (out.exit_code < 0) {
    self->receive([&](done_atom, int code) { out.exit_code = code; },
                  caf::after(signal_poll) >>
                      [&] {
                        auto now = std::chrono::steady_clock::now();
                        if (!stop_by && stop_signal_within(0)) {
                          stop_by =
                              now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                        bound);
                          rt.shutdown();
                        } else if (stop_by && now >= *stop_by) {
                          out = {0, false};
                        }
                      });
  }
  if (!out.drained) {
    log::warn("in-flight work did not finish within the drain bound; exiting without it, its "
              "claims left to recovery",
              {{"drain_bound_seconds", bound.count()},
               {"still_running", running_members(supervision_json(sys, rt))}});
    rt.keep_claims_for_recovery();
  }
  // Only a clean stop leaves: after a core failure claims may be stranded,
  // and the expiring lease hands them to a survivor's recovery.
  if (out.exit_code == 0)
    rt.leave_cluster();
  return out;
}

} // namespace mg::actors
