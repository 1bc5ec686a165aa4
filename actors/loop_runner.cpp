#include "actors/loop_runner.hpp"

#include <cmath>
#include <random>

#include "config/log.hpp"
#include "config/metrics.hpp"
#include "domain/json.hpp"
#include "domain/json_writer.hpp"
#include "persistence/heartbeat_store.hpp"

namespace mg::actors {

namespace {

constexpr auto heartbeat_every = std::chrono::seconds(1);

/// A worker's Prometheus series, looked up once per worker (label worker=name).
struct worker_meters {
  explicit worker_meters(const std::string& worker) {
    auto& r = metrics::registry::global();
    const metrics::labels l{{"worker", worker}};
    iterations = &r.get_counter("movegate_worker_iterations_total", "Loop passes run.", l);
    items = &r.get_counter("movegate_worker_items_total", "Items processed by loop passes.", l);
    errors = &r.get_counter("movegate_worker_errors_total", "Loop passes that failed.", l);
    duration = &r.get_histogram("movegate_worker_pass_duration_seconds",
                                "Duration of one loop pass.", metrics::duration_buckets(), l);
  }
  metrics::counter* iterations;
  metrics::counter* items;
  metrics::counter* errors;
  metrics::histogram* duration;
};

double jitter_draw() {
  thread_local std::mt19937 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
}

void forward_wakeups(const workers::pass_result& r, const worker_env& env,
                     worker_actor::stateful_pointer<loop_state> self) {
  auto& links = *env.links;
  // Reconcile hand-offs are the engine's data path, not a latency hint:
  // they flow with wake-ups off too (the sweep is the safety net).
  if (links.registry)
    for (auto& id : r.reconcile)
      self->send(links.registry, changed_atom::value, id);
  if (!env.wakeups)
    return;
  if (r.wake_observer && links.observer)
    self->send(links.observer, wake_atom::value);
  if (r.wake_recovery && links.recovery)
    self->send(links.recovery, wake_atom::value);
  if (r.wake_dispatcher)
    links.wake_dispatchers();
  else if (r.activated > 0)
    links.wake_dispatchers_for(static_cast<size_t>(r.activated));
}

/// At most one heartbeat write a second (and at once when the error count
/// changed), so a draining worker does not pay a write per item.
void maybe_beat(loop_state& st, const worker_spec& spec, const worker_env& env) {
  auto now = std::chrono::steady_clock::now();
  if (now - st.last_beat < heartbeat_every && st.consecutive_errors == st.reported_errors)
    return;
  try {
    db::heartbeat h;
    h.status = st.consecutive_errors >= domain::max_consecutive_errors ? "backing_off" : "running";
    h.iterations = st.unreported_iterations;
    h.items = st.unreported_items;
    h.consecutive_errors = st.consecutive_errors;
    h.last_error = st.last_error;
    db::beat(st.conn->get(), {spec.name, env.runtime_node, env.network_class}, h);
    st.unreported_iterations = st.unreported_items = 0;
    st.reported_errors = st.consecutive_errors;
    st.last_beat = now;
  } catch (const std::exception& ex) {
    st.conn->reset(); // the next pass reconnects and reports the error
  }
}

/// In the reference's error backoff (5 failed passes in a row) the worker
/// sleeps it out: a wake-up runs no pass early (a failing database or
/// provider is not hammered because work keeps arriving).
bool backing_off(const loop_state& st) {
  return st.consecutive_errors >= domain::max_consecutive_errors;
}

void schedule(worker_actor::stateful_pointer<loop_state> self, double delay_seconds) {
  auto& st = self->state;
  auto gen = ++st.generation;
  if (delay_seconds <= 0) {
    st.immediate_pending = true;
    self->send(self, tick_atom::value, gen);
  } else {
    self->delayed_send(self, std::chrono::microseconds(static_cast<long>(delay_seconds * 1e6)),
                       tick_atom::value, gen);
  }
}

/// Runs one pass and schedules the next; returns the fatal outcome instead
/// when the worker must stop (then nothing is scheduled).
std::optional<std::string> run_pass(worker_actor::stateful_pointer<loop_state> self,
                                    const worker_spec& spec, const worker_env& env,
                                    const worker_meters& meters) {
  auto& st = self->state;
  log::component_scope component(spec.name);
  const auto pass_started = std::chrono::steady_clock::now();
  int processed = 0;
  std::optional<double> next_due;
  // Cleared on every way out of the pass (a throwing pass included).
  struct busy_scope {
    std::atomic<bool>* flag;
    explicit busy_scope(std::atomic<bool>* f) : flag(f) {
      if (flag)
        flag->store(true, std::memory_order_relaxed);
    }
    ~busy_scope() {
      if (flag)
        flag->store(false, std::memory_order_relaxed);
    }
  } busy(spec.busy.get());
  std::optional<std::string> fatal;
  try {
    auto r = spec.pass(*st.conn);
    if (!r.fatal.empty())
      fatal = r.fatal;
    processed = r.processed;
    next_due = r.next_due_in_seconds;
    st.busy_streak = r.busy && processed == 0 ? st.busy_streak + 1 : 0;
    if (st.busy_streak > 0)
      next_due = workers::busy_retry_seconds * std::pow(2.0, std::min(st.busy_streak - 1, 16));
    st.consecutive_errors = 0;
    if (!r.standing_problem.empty())
      st.last_error = r.standing_problem;
    forward_wakeups(r, env, self);
  } catch (const std::exception& ex) {
    ++st.consecutive_errors;
    st.last_error = ex.what();
    if (db::is_connection_error(ex))
      st.conn->reset();
    log::error("worker pass failed", {{"worker", spec.name},
                                      {"consecutive_errors", st.consecutive_errors},
                                      {"error", ex.what()}});
  } catch (...) {
    // Not an error a retry can cure, and not one the pass chose to report:
    // stop the worker as a fatal outcome rather than let it escape the
    // handler.
    fatal = "worker pass threw a non-standard exception";
  }
  meters.duration->observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - pass_started).count());
  meters.iterations->inc();
  meters.items->inc(processed);
  if (st.consecutive_errors > 0)
    meters.errors->inc();
  ++st.iterations;
  ++st.unreported_iterations;
  st.items += processed;
  st.unreported_items += processed;
  if (fatal) {
    st.last_error = *fatal;
    st.last_beat = {}; // the heartbeat shows why the worker stopped
    maybe_beat(st, spec, env);
    return fatal;
  }
  maybe_beat(st, spec, env);
  auto policy = spec.policy;
  policy.drain = policy.drain && env.wakeups;
  auto delay = domain::next_loop_delay(policy, st.consecutive_errors, processed, jitter_draw());
  // Never a busy spin on an item due "now" that another transaction holds.
  constexpr double min_due_delay = 0.002;
  if (env.wakeups && next_due && st.consecutive_errors == 0)
    delay = std::min(delay, std::max(*next_due, min_due_delay));
  schedule(self, delay);
  return std::nullopt;
}

} // namespace

worker_actor::behavior_type loop_worker(worker_actor::stateful_pointer<loop_state> self,
                                        worker_spec spec, worker_env env) {
  self->state.conn = std::make_unique<db::connection_slot>(
      db::with_application_name(env.database_url, "movegate:" + spec.name), spec.plans);
  auto meters = std::make_shared<const worker_meters>(spec.name);
  return {
      [=](tick_atom, uint64_t gen) {
        auto& st = self->state;
        if (gen != st.generation)
          return; // superseded by a wake-up
        st.immediate_pending = false;
        if (env.links && env.links->stopping && !spec.outlives_drain)
          return; // the supervisor's exit message follows
        if (auto fatal = run_pass(self, spec, env, *meters)) {
          log::error("worker stopped: fatal pass outcome",
                     {{"worker", spec.name}, {"reason", *fatal}});
          // The exit reason is the supervisor's message: it sees this
          // worker down with the reason and reacts by its group.
          self->quit(caf::make_error(caf::sec::runtime_error, *fatal));
        }
      },
      [=](wake_atom) {
        auto& st = self->state;
        if (st.immediate_pending || backing_off(st))
          return;
        if (!env.wakeups && st.iterations > 0)
          return; // pure polling: only the first (start) wake counts
        schedule(self, 0);
      },
      [=](status_atom) {
        auto& st = self->state;
        json::writer w;
        w.begin_object()
            .member("worker", spec.name)
            .member("group", to_string(spec.group))
            .member("iterations", st.iterations)
            .member("items", st.items)
            .member("consecutive_errors", st.consecutive_errors)
            .end_object();
        return w.str();
      },
  };
}

} // namespace mg::actors
