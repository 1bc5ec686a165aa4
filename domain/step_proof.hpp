#pragma once
// The proof artifacts of provider answers (node_artifacts kinds
// submit_proof, observe_proof, recover_proof): every path records the same
// fields of what the engine acted on, so an operator reads one shape.
// Generated artifacts are rows of their own (kind `generated`).
#include <chrono>
#include <string>

#include "domain/executor.hpp"

namespace mg::domain {

/// {next_state, provider_state, provider_refs, provider_ref_id,
/// retry_after_seconds, error_code, error_detail} of `r` (provider_refs must
/// be a JSON object already: a checked answer), and answered_at (ISO 8601
/// UTC, microseconds) when the engine stamped it.
std::string step_proof_json(const step_result& r);

/// `t` as ISO 8601 UTC with microseconds: 2026-12-05T03:04:05.123456Z.
std::string utc_timestamp_text(std::chrono::system_clock::time_point t);

/// {outcome, next_state} — the state the answer led to — and the fields of
/// step_proof_json for the answer's result.
std::string recover_proof_json(recover_outcome outcome, node_state led_to, const step_result& r);

} // namespace mg::domain
