#pragma once
// Request and node states (SPEC §1) and the transitions the engine allows.
#include <optional>
#include <string_view>

namespace mg::domain {

enum class request_state {
  pending_approval,
  approved,
  executing,
  waiting_manual_action,
  manual_intervention,
  completed,
  failed,
  rejected,
  expired,
  cancelled,
};

enum class node_state {
  blocked,
  ready,
  preparing,
  awaiting_signature,
  submitting,
  submitted,
  observing,
  completed,
  failed,
  unknown,
  skipped,
  cancelled,
};

std::string_view to_string(request_state s);
std::string_view to_string(node_state s);
std::optional<request_state> parse_request_state(std::string_view s);
std::optional<node_state> parse_node_state(std::string_view s);

/// Terminal for the workers (an operator's retry may reopen FAILED).
bool is_terminal(request_state s);
/// The request is being driven by the workers: reconcile may act on it.
bool is_active(request_state s);
/// A node no worker will move again without an operator.
bool is_terminal(node_state s);
/// SUBMITTING, SUBMITTED, OBSERVING (UNKNOWN is in flight only until it
/// settles, which needs time and the error code: see reconcile).
bool is_submitted_in_flight(node_state s);

bool transition_allowed(request_state from, request_state to);
bool transition_allowed(node_state from, node_state to);

// --- what an executor may answer (SPEC §4 "an executor's answer is input") ---

/// The provider calls whose answers move a node.
enum class executor_step { preflight, prepare, sign, submit, observe, recover };

/// Error code of a node whose provider gave an answer its step does not allow.
inline constexpr const char* provider_protocol_error_code = "PROVIDER_PROTOCOL_ERROR";

/// Whether `next` is a state `step` may answer: preflight stops a node only
/// as FAILED, COMPLETED or SKIPPED; submit, observe and a found recover
/// answer SUBMITTED, OBSERVING, COMPLETED, FAILED or UNKNOWN. prepare and
/// sign answer no state.
bool answer_allowed(executor_step step, node_state next);

/// Where a protocol error leaves the node: FAILED before SUBMITTING
/// (nothing went out), UNKNOWN from submit on (something may have).
node_state protocol_error_state(executor_step step);

std::string_view to_string(executor_step step);

/// An UNKNOWN node with this error code is settled at once: no recovery
/// until an operator resumes or retries (OBSERVATION_TIMEOUT,
/// PROVIDER_PROTOCOL_ERROR).
bool settles_at_once(std::string_view error_code);

} // namespace mg::domain
