#pragma once
// SPEC §4 "an executor's answer is input, too": what the engine accepts from
// a provider's step result, and what it records instead of one it does not.
// Shared by the dispatcher, observer and recovery, so a bad answer settles
// that one node and never aborts a pass, a lane, an arm or a claim.
#include <string>
#include <string_view>

#include "domain/executor.hpp"

namespace mg::domain {

/// Why `r`, the answer of `step`, may not be acted on (empty when it may): a
/// next_state the step does not allow (answer_allowed), provider_refs that
/// are not a JSON object, generated_artifacts that are not a JSON array, or
/// either breaking the rules of provider JSON (parse_provider_json). An
/// absent next_state is not checked: each step has its meaning for it.
std::string answer_problem(executor_step step, const step_result& r);

/// What the engine records instead of a bad answer: the step's
/// protocol_error_state with PROVIDER_PROTOCOL_ERROR and `problem` as the
/// detail, keeping provider_state and provider_ref_id (text, for the
/// operator) and the refs and artifacts only when they are well-formed.
step_result protocol_violation(executor_step step, const step_result& answer,
                               const std::string& problem);

/// `r` (empty provider_refs / generated_artifacts read as none) when
/// answer_problem finds nothing, else its protocol_violation.
step_result checked_answer(executor_step step, step_result r);

/// `s` as text a database column takes: valid UTF-8 without U+0000 (each
/// offending byte becomes U+FFFD), at most `max_bytes` long (cut at a
/// character boundary). Provider text (states, ids, error details) passes
/// through it before it is stored.
std::string storable_text(std::string_view s, size_t max_bytes = 4096);

} // namespace mg::domain
