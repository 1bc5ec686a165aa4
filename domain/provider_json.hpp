#pragma once
// The executor/signer port's values as JSON text, so a provider living in
// another process (a sibling's actor, SPEC §8) is reached with std::string
// messages only and neither side registers a CAF type. Every from_json
// throws provider_protocol_error on malformed, oversized or hostile input
// (over max_answer_bytes, nested deeper than max_answer_depth, U+0000, a
// lone surrogate, a repeated member name, a member of the wrong type): a
// bad answer from a remote provider is never a guessed value (SPEC §4).
#include <optional>
#include <string>

#include "domain/executor.hpp"
#include "domain/json.hpp"

namespace mg::domain {

/// The largest document a provider may answer with.
inline constexpr size_t max_answer_bytes = 1 << 20;
/// The deepest nesting a provider's answer may have.
inline constexpr int max_answer_depth = 64;

/// Parses JSON a provider sent (any value), under the rules above.
json::document parse_provider_json(const std::string& text, const char* what);

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
