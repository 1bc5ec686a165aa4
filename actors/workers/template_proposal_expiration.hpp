#pragma once
// template_proposal_expiration pass (reference §8): pending proposals past
// expires_at become 'expired', so abandoned proposals stop being actionable.
#include "actors/workers/engine.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

inline constexpr int proposal_expiration_batch = 100;

pass_result proposal_expiration_pass(db::connection_slot& conn);

} // namespace mg::workers
