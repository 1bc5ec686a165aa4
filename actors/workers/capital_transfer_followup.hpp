#pragma once
// capital_transfer_followup (reference §12, sidecar): pending
// capital_transfer_requests older than MG_CAPITAL_TRANSFER_STALE_SECONDS
// are settled from their linked movement request's verdict, or — while the
// movement is still open or there is none — surfaced for operator
// attention once (flag + timestamp on the row, one notification_outbox row).
#include <optional>

#include "actors/workers/engine.hpp"
#include "domain/states.hpp"
#include "persistence/connection_slot.hpp"

namespace mg::workers {

/// Rows looked at per pass (one transaction).
inline constexpr int capital_followup_batch = 20;

enum class capital_verdict { complete, fail, surface };

/// COMPLETED → complete; FAILED, CANCELLED, EXPIRED, REJECTED → fail (no
/// money moves any more); anything else, or no movement → surface.
capital_verdict capital_followup_verdict(std::optional<domain::request_state> movement_state);

struct capital_followup_counts {
  int completed = 0;
  int failed = 0;
  int surfaced = 0;
};

pass_result capital_transfer_followup_pass(db::connection_slot& conn, const config::settings& s,
                                           capital_followup_counts* counts = nullptr);

} // namespace mg::workers
