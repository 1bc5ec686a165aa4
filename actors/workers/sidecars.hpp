#pragma once
// The always-on sidecar workers of the reference (besides the callback
// dispatcher): expiration_checker, template_proposal_expiration,
// executor_health, audit_outbox_promoter — all in the sidecar group
// (logged and restarted on a crash, never fatal), intervals from settings.
#include <memory>
#include <vector>

#include "actors/loop_runner.hpp"
#include "actors/workers/engine.hpp"

namespace mg::actors {

std::vector<worker_spec> sidecar_workers(const std::shared_ptr<workers::engine_context>& ctx);

} // namespace mg::actors
