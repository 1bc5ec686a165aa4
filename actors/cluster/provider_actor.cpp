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

} // namespace

actors::remote_executor_actor spawn_executor_actor(caf::actor_system& sys,
                                                   std::shared_ptr<domain::executor> executor) {
  return sys.spawn<caf::detached>(executor_behavior, std::move(executor));
}

actors::remote_signer_actor spawn_signer_actor(caf::actor_system& sys,
                                               std::shared_ptr<domain::signer> signer) {
  return sys.spawn<caf::detached>(signer_behavior, std::move(signer));
}

} // namespace mg::cluster
