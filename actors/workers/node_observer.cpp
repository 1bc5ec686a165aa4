#include "actors/workers/node_observer.hpp"

#include <exception>
#include <stdexcept>

#include "actors/workers/node_result.hpp"
#include "actors/workers/observation.hpp"
#include "config/log.hpp"
#include "domain/json.hpp"
#include "persistence/context_loader.hpp"
#include "persistence/node_store.hpp"

namespace mg::workers {

using domain::node_state;

namespace {

/// timeout_policy.observe_seconds, or 0 when absent.
double observe_seconds(const domain::plan& p, const std::string& node_key) {
  auto i = p.find(node_key);
  if (!i)
    return 0;
  auto policy = json::parse(p.nodes[*i].timeout_policy_json);
  if (!policy || !policy->IsObject() || !policy->HasMember("observe_seconds") ||
      !(*policy)["observe_seconds"].IsNumber())
    return 0;
  return (*policy)["observe_seconds"].GetDouble();
}

bool timed_out(const db::claimed_node& n, const db::stored_plan& stored, const engine& e) {
  if (!e.settings.observe_timeout_enforcement_enabled)
    return false;
  double limit = observe_seconds(stored.plan, n.node_key);
  return limit > 0 && n.seconds_since_started > limit;
}

/// Observes one node claimed by `tx`, which is rolled back before the
/// executor is called: the result is written by whoever it is handed to.
std::shared_ptr<handed_result> observe_claimed(pqxx::work& tx, const db::claimed_node& n,
                                               const engine& e) {
  auto stored = e.plans.get(tx, n.template_key, n.template_version);
  auto result = std::make_shared<handed_result>(
      handed_result{n, {}, db::event_batch(n.request_id, e.settings.callback_max_attempts)});
  auto& u = result->update;
  if (timed_out(n, *stored, e)) {
    tx.abort();
    // A paging signal, never auto-recovered: no executor call.
    u.next_state = node_state::unknown;
    u.error_code = "OBSERVATION_TIMEOUT";
    u.error_detail = "observe_seconds exceeded";
    return result;
  }
  auto built = db::build_context(tx, n, *stored, n.attempt_no);
  tx.abort(); // no lock is held across the executor call
  auto r = call_observe(n, built.ctx, e);
  u = observation_update(n, r);
  add_observation_artifacts(result->events, n, r);
  return result;
}

/// Claims and observes each node of `ids`, each claim in its own
/// transaction rolled back before the executor call (the claim is that
/// transaction's first statement, so a miss releases its partial locks),
/// then hands every result over and waits for the answers: a node is not
/// listed again while its result waits.
void observe_each(db::connection_slot& conn, const engine& e, const std::vector<std::string>& ids,
                  pass_result& out) {
  std::vector<std::shared_ptr<handed_result>> results;
  for (auto& id : ids) {
    pqxx::work tx(conn.get());
    auto claimed = db::claim_for_observe(tx, id, e.settings.network_class,
                                         db::claim_scope::first_in_transaction);
    if (!claimed) {
      tx.abort();
      out.busy = true; // its request is busy: look again soon
      continue;
    }
    ++out.processed;
    results.push_back(observe_claimed(tx, *claimed, e));
    auto& u = results.back()->update;
    if (u.next_observe_in_seconds && *u.next_observe_in_seconds == 0)
      out.wake_observer = true;
  }
  hand_over_results(conn.get(), e, results, out);
}

void merge(pass_result& into, pass_result&& part) {
  into.processed += part.processed;
  into.stale += part.stale;
  into.wake_observer |= part.wake_observer;
  into.activated += part.activated;
  into.busy |= part.busy;
  if (part.next_due_in_seconds)
    into.next_due_in_seconds = part.next_due_in_seconds;
}

struct lane_state {
  static inline const char* name = "observe-lane";
  std::unique_ptr<db::connection_slot> conn;
};

actors::observe_lane_actor::behavior_type
observe_lane(actors::observe_lane_actor::stateful_pointer<lane_state> self,
             std::shared_ptr<engine_context> ctx, int index) {
  self->state.conn = std::make_unique<db::connection_slot>(
      db::with_application_name(ctx->settings.database_url,
                                "movegate:node_observer-" + std::to_string(index)),
      db::plan_choice::generic);
  return {
      [=](actors::observe_atom, const std::vector<std::string>& ids)
          -> caf::result<int32_t, int32_t, int32_t, bool, bool> {
        pass_result part;
        try {
          observe_each(*self->state.conn, ctx->e, ids, part);
        } catch (const std::exception& ex) {
          // What it committed before the failure stands, each observation
          // reconciled in its own transaction.
          self->state.conn->reset();
          return caf::make_error(caf::sec::runtime_error, ex.what());
        }
        return {part.processed, part.stale, part.activated, part.wake_observer, part.busy};
      },
  };
}

} // namespace

observe_lanes::observe_lanes(caf::actor_system& sys, std::shared_ptr<engine_context> ctx, int count)
    : sys_(sys) {
  for (int i = 1; i <= count; ++i)
    lanes_.push_back(sys.spawn<caf::detached>(observe_lane, ctx, i));
}

observe_lanes::~observe_lanes() {
  // Detached actors keep the actor system waiting until they are stopped.
  for (auto& l : lanes_)
    caf::anon_send_exit(l, caf::exit_reason::user_shutdown);
}

std::string observe_lanes::run(const std::vector<std::vector<std::string>>& shares,
                               std::chrono::milliseconds timeout, pass_result& out,
                               const std::function<void()>& meanwhile) {
  caf::scoped_actor self{sys_};
  using handle = decltype(self->request(lanes_[0], timeout, actors::observe_atom::value,
                                        std::vector<std::string>{}));
  std::vector<std::pair<size_t, handle>> asked;
  for (size_t i = 0; i < shares.size() && i < lanes_.size(); ++i)
    if (!shares[i].empty())
      asked.emplace_back(i,
                         self->request(lanes_[i], timeout, actors::observe_atom::value, shares[i]));
  meanwhile();
  std::string failures;
  for (auto& [i, h] : asked)
    h.receive(
        [&](int32_t processed, int32_t stale, int32_t activated, bool wake, bool busy) {
          pass_result part;
          part.processed = processed;
          part.stale = stale;
          part.activated = activated;
          part.wake_observer = wake;
          part.busy = busy;
          merge(out, std::move(part));
        },
        [&, lane = i](const caf::error& err) {
          auto what = "observe lane " + std::to_string(lane + 1) + ": " + sys_.render(err);
          // A lane that is gone never comes back: the observer must not
          // limp on without it (fail fast, as a core worker does).
          if (err == caf::sec::request_receiver_down)
            out.fatal = what;
          failures += (failures.empty() ? "" : "; ") + what;
        });
  return failures;
}

pass_result observe_pass(db::connection_slot& conn, const engine& e, observe_lanes* lanes) {
  pass_result out;
  std::vector<std::string> ids;
  {
    pqxx::nontransaction snapshot(conn.get());
    ids = db::observe_candidates(snapshot, e.settings.network_class,
                                 e.settings.node_observe_batch_size);
    if (ids.empty() && e.settings.wakeups_enabled)
      out.next_due_in_seconds = db::next_observe_due_in(snapshot, e.settings.network_class);
  }
  size_t count = std::min(ids.size(), 1 + (lanes ? lanes->size() : 0));
  if (count <= 1) {
    observe_each(conn, e, ids, out);
    return out;
  }
  // Deal the candidates round-robin: share 0 runs here, share i on lane i.
  std::vector<std::vector<std::string>> shares(count);
  for (size_t i = 0; i < ids.size(); ++i)
    shares[i % count].push_back(ids[i]);
  std::vector<std::vector<std::string>> lane_shares(shares.begin() + 1, shares.end());
  // A lane's every node may take a full executor call; never wait forever.
  auto per_node = std::chrono::duration<double>(e.settings.executor_timeout_seconds + 30);
  auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
      per_node * static_cast<double>(shares[1].size()));
  std::exception_ptr own_error;
  auto failures = lanes->run(lane_shares, timeout, out, [&] {
    try {
      observe_each(conn, e, shares[0], out);
    } catch (...) {
      own_error = std::current_exception();
    }
  });
  if (!out.fatal.empty())
    return out;
  if (own_error)
    std::rethrow_exception(own_error); // the loop runner resets a lost connection
  if (!failures.empty())
    throw std::runtime_error(failures);
  return out;
}

} // namespace mg::workers
