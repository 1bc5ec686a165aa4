#pragma once
// The executor/signer port's values as JSON text, so a provider living in
// another process (a sibling's actor, SPEC §8) is reached with std::string
// messages only and neither side registers a CAF type. Every from_json
// throws executor_error on malformed input: a bad answer from a remote
// provider is a failed call, never a guessed value.
#include <optional>
#include <string>

#include "domain/executor.hpp"

namespace mg::domain {

std::string to_json(const execution_context& c);
execution_context execution_context_from_json(const std::string& text);

std::string to_json(const step_result& r);
step_result step_result_from_json(const std::string& text);

/// nullopt ↔ "null" (preflight: go on).
std::string to_json(const std::optional<step_result>& r);
std::optional<step_result> optional_step_result_from_json(const std::string& text);

/// nullopt ↔ "null" (prepare: nothing to submit).
std::string to_json(const std::optional<prepared_action>& a);
std::optional<prepared_action> optional_prepared_action_from_json(const std::string& text);
std::string to_json(const prepared_action& a);
prepared_action prepared_action_from_json(const std::string& text);

std::string to_json(const recover_result& r);
recover_result recover_result_from_json(const std::string& text);

std::string to_json(const health_result& h);
health_result health_result_from_json(const std::string& text);

std::string to_json(const sign_request& r);
sign_request sign_request_from_json(const std::string& text);

/// nullptr ↔ "null" (submit without a signature).
std::string to_json(const sign_result* s);
std::optional<sign_result> optional_sign_result_from_json(const std::string& text);
std::string to_json(const sign_result& s);
sign_result sign_result_from_json(const std::string& text);

} // namespace mg::domain
