#include "actors/workers/sidecars.hpp"

#include "actors/workers/audit_outbox_promoter.hpp"
#include "actors/workers/callback_dispatcher.hpp"
#include "actors/workers/executor_health.hpp"
#include "actors/workers/expiration_checker.hpp"
#include "actors/workers/template_proposal_expiration.hpp"
#include "config/log.hpp"

namespace mg::actors {

std::vector<worker_spec> sidecar_workers(const std::shared_ptr<workers::engine_context>& ctx) {
  auto& s = ctx->settings;
  auto every = [&s](double interval, bool drain) {
    return domain::loop_policy{interval, s.worker_jitter_seconds, drain};
  };
  std::vector<worker_spec> specs;
  specs.push_back({"expiration_checker", worker_group::sidecar,
                   every(s.expiration_check_interval_seconds, true), [ctx](db::connection_slot& c) {
                     return workers::expiration_pass(c, ctx->settings);
                   }});
  specs.push_back({"template_proposal_expiration", worker_group::sidecar,
                   every(s.template_proposal_expiration_interval_seconds, true),
                   [](db::connection_slot& c) {
                     return workers::proposal_expiration_pass(c);
                   }});
  // Every pass checks every provider, so "processed" is never 0: no drain.
  specs.push_back({"executor_health", worker_group::sidecar,
                   every(s.executor_health_interval_seconds, false), [ctx](db::connection_slot& c) {
                     return workers::executor_health_pass(c, ctx->providers,
                                                          ctx->settings.runtime_node);
                   }});
  specs.push_back({"audit_outbox_promoter", worker_group::sidecar,
                   every(s.audit_outbox_promoter_interval_seconds, true),
                   [](db::connection_slot& c) {
                     return workers::audit_promotion_pass(c);
                   }});
  // Always on (the reference). Unsigned callbacks are never sent: without a
  // secret each pass sends nothing and says why in the heartbeat; the rows
  // wait in the outbox (nothing lost) until a process with one delivers them.
  if (s.callback_secret.empty())
    log::warn("callback_dispatcher sends nothing: MG_CALLBACK_SECRET is not set");
  auto callbacks = std::make_shared<workers::callback_dispatcher>(s);
  specs.push_back({"callback_dispatcher", worker_group::sidecar,
                   every(s.callback_dispatch_interval_seconds, true),
                   [callbacks](db::connection_slot& c) {
                     return callbacks->pass(c);
                   }});
  return specs;
}

} // namespace mg::actors
