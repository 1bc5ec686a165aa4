#include "actors/cluster/provider_actor.hpp"

#include "actors/cluster/movement_client.hpp"
#include "domain/provider_json.hpp"

namespace mg::cluster {

namespace {

using text_result = caf::result<std::string>;

/// Runs one port call; an exception becomes the error answer movegate
/// turns into executor_error (never a guessed success).
template <class F> text_result guarded(F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return caf::error(static_cast<uint8_t>(2), actors::cluster_error_category,
                      caf::make_message(static_cast<int32_t>(502), std::string(e.what())));
  }
}

actors::remote_executor_actor::behavior_type
executor_behavior(actors::remote_executor_actor::pointer, std::shared_ptr<domain::executor> x) {
  using namespace domain;
  return {
      [x](actors::preflight_atom, const std::string& ctx) {
        return guarded([&] { return to_json(x->preflight(execution_context_from_json(ctx))); });
      },
      [x](actors::prepare_atom, const std::string& ctx) {
        return guarded([&] { return to_json(x->prepare(execution_context_from_json(ctx))); });
      },
      [x](actors::submit_atom, const std::string& ctx, const std::string& action,
          const std::string& signature) {
        return guarded([&] {
          auto sig = optional_sign_result_from_json(signature);
          return to_json(x->submit(execution_context_from_json(ctx),
                                   prepared_action_from_json(action), sig ? &*sig : nullptr));
        });
      },
      [x](actors::observe_atom, const std::string& ctx) {
        return guarded([&] { return to_json(x->observe(execution_context_from_json(ctx))); });
      },
      [x](actors::recover_atom, const std::string& ctx) {
        return guarded([&] { return to_json(x->recover(execution_context_from_json(ctx))); });
      },
      [x](actors::health_atom) { return guarded([&] { return to_json(x->health()); }); },
      [x](actors::abandon_atom, const std::string& ctx, const std::string& action) {
        return guarded([&] {
          x->abandon(execution_context_from_json(ctx), prepared_action_from_json(action));
          return std::string("{}");
        });
      },
  };
}

actors::remote_signer_actor::behavior_type signer_behavior(actors::remote_signer_actor::pointer,
                                                           std::shared_ptr<domain::signer> s) {
  using namespace domain;
  return {
      [s](actors::sign_atom, const std::string& req) {
        return guarded([&] { return to_json(s->sign(sign_request_from_json(req))); });
      },
      [s](actors::health_atom) { return guarded([&] { return to_json(s->health()); }); },
  };
}

/// Asks `worker` and answers the original caller itself, so only this
/// actor is ever seen by the middleman (see spawn_executor_actor).
template <class Self, class Worker, class... Ts>
text_result relay(Self* self, const Worker& worker, Ts... xs) {
  auto rp = self->template make_response_promise<std::string>();
  self->request(worker, caf::infinite, std::move(xs)...)
      .then([rp](std::string& answer) mutable { rp.deliver(std::move(answer)); },
            [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

actors::remote_executor_actor::behavior_type
executor_front(actors::remote_executor_actor::pointer self, actors::remote_executor_actor worker) {
  self->link_to(worker);
  using namespace actors;
  return {
      [=](preflight_atom a, std::string ctx) { return relay(self, worker, a, std::move(ctx)); },
      [=](prepare_atom a, std::string ctx) { return relay(self, worker, a, std::move(ctx)); },
      [=](submit_atom a, std::string ctx, std::string action, std::string signature) {
        return relay(self, worker, a, std::move(ctx), std::move(action), std::move(signature));
      },
      [=](observe_atom a, std::string ctx) { return relay(self, worker, a, std::move(ctx)); },
      [=](recover_atom a, std::string ctx) { return relay(self, worker, a, std::move(ctx)); },
      [=](health_atom a) { return relay(self, worker, a); },
      [=](abandon_atom a, std::string ctx, std::string action) {
        return relay(self, worker, a, std::move(ctx), std::move(action));
      },
  };
}

actors::remote_signer_actor::behavior_type signer_front(actors::remote_signer_actor::pointer self,
                                                        actors::remote_signer_actor worker) {
  self->link_to(worker);
  using namespace actors;
  return {
      [=](sign_atom a, std::string req) { return relay(self, worker, a, std::move(req)); },
      [=](health_atom a) { return relay(self, worker, a); },
  };
}

} // namespace

// The port calls may block on the network, so they run in a detached
// worker. A detached actor's thread, though, ends only once the last
// reference to the actor is gone, and the actor system's end waits for that
// thread: a reference the middleman keeps to an actor it has sent messages
// for (CAF 0.17 sometimes keeps one past the actor's death) would hang the
// sibling's exit for ever. So the middleman only ever sees a scheduled
// front actor, linked to the worker (either's end ends the other).
actors::remote_executor_actor spawn_executor_actor(caf::actor_system& sys,
                                                   std::shared_ptr<domain::executor> executor) {
  return sys.spawn(executor_front,
                   sys.spawn<caf::detached>(executor_behavior, std::move(executor)));
}

actors::remote_signer_actor spawn_signer_actor(caf::actor_system& sys,
                                               std::shared_ptr<domain::signer> signer) {
  return sys.spawn(signer_front, sys.spawn<caf::detached>(signer_behavior, std::move(signer)));
}

} // namespace mg::cluster
