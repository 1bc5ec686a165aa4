#include "domain/states.hpp"

#include <array>
#include <utility>

namespace mg::domain {

namespace {

constexpr std::array<std::pair<request_state, std::string_view>, 10> request_names{{
    {request_state::pending_approval, "PENDING_APPROVAL"},
    {request_state::approved, "APPROVED"},
    {request_state::executing, "EXECUTING"},
    {request_state::waiting_manual_action, "WAITING_MANUAL_ACTION"},
    {request_state::manual_intervention, "MANUAL_INTERVENTION"},
    {request_state::completed, "COMPLETED"},
    {request_state::failed, "FAILED"},
    {request_state::rejected, "REJECTED"},
    {request_state::expired, "EXPIRED"},
    {request_state::cancelled, "CANCELLED"},
}};

constexpr std::array<std::pair<node_state, std::string_view>, 12> node_names{{
    {node_state::blocked, "BLOCKED"},
    {node_state::ready, "READY"},
    {node_state::preparing, "PREPARING"},
    {node_state::awaiting_signature, "AWAITING_SIGNATURE"},
    {node_state::submitting, "SUBMITTING"},
    {node_state::submitted, "SUBMITTED"},
    {node_state::observing, "OBSERVING"},
    {node_state::completed, "COMPLETED"},
    {node_state::failed, "FAILED"},
    {node_state::unknown, "UNKNOWN"},
    {node_state::skipped, "SKIPPED"},
    {node_state::cancelled, "CANCELLED"},
}};

template <class Names, class E> std::string_view name_of(const Names& names, E e) {
  for (auto& [value, name] : names)
    if (value == e)
      return name;
  return "?";
}

template <class E, class Names> std::optional<E> value_of(const Names& names, std::string_view s) {
  for (auto& [value, name] : names)
    if (name == s)
      return value;
  return std::nullopt;
}

} // namespace

std::string_view to_string(request_state s) {
  return name_of(request_names, s);
}
std::string_view to_string(node_state s) {
  return name_of(node_names, s);
}
std::optional<request_state> parse_request_state(std::string_view s) {
  return value_of<request_state>(request_names, s);
}
std::optional<node_state> parse_node_state(std::string_view s) {
  return value_of<node_state>(node_names, s);
}

bool is_terminal(request_state s) {
  switch (s) {
  case request_state::completed:
  case request_state::failed:
  case request_state::rejected:
  case request_state::expired:
  case request_state::cancelled:
    return true;
  default:
    return false;
  }
}

bool is_active(request_state s) {
  return s == request_state::approved || s == request_state::executing ||
         s == request_state::waiting_manual_action;
}

bool is_terminal(node_state s) {
  return s == node_state::completed || s == node_state::skipped || s == node_state::cancelled;
}

bool is_submitted_in_flight(node_state s) {
  return s == node_state::submitting || s == node_state::submitted || s == node_state::observing;
}

bool transition_allowed(request_state from, request_state to) {
  using r = request_state;
  switch (from) {
  case r::pending_approval:
    return to == r::approved || to == r::rejected || to == r::expired || to == r::cancelled;
  case r::approved:
    return to == r::executing || to == r::waiting_manual_action || to == r::cancelled ||
           to == r::manual_intervention || to == r::failed || to == r::completed;
  case r::executing:
    return to == r::waiting_manual_action || to == r::manual_intervention || to == r::completed ||
           to == r::failed || to == r::cancelled;
  case r::waiting_manual_action:
    return to == r::executing || to == r::manual_intervention || to == r::completed ||
           to == r::failed || to == r::cancelled;
  case r::manual_intervention:
    return to == r::executing; // resume / retry
  case r::failed:
    return to == r::executing; // operator retry
  default:
    return false;
  }
}

bool transition_allowed(node_state from, node_state to) {
  using n = node_state;
  if (to == n::cancelled)
    return from == n::blocked || from == n::ready;
  switch (from) {
  case n::blocked:
    return to == n::ready || to == n::skipped;
  case n::ready:
    // FAILED straight from READY: max attempts, plan drift, unresolved $ref.
    return to == n::preparing || to == n::completed /* manual */ || to == n::failed;
  case n::preparing:
    return to == n::awaiting_signature || to == n::submitting || to == n::failed ||
           to == n::completed || to == n::skipped || to == n::ready;
  case n::awaiting_signature:
    return to == n::submitting || to == n::failed;
  case n::submitting:
    // Recovery may find the attempt in any outcome, or fence it (READY).
    return to == n::submitted || to == n::observing || to == n::completed || to == n::failed ||
           to == n::unknown || to == n::ready;
  case n::submitted:
  case n::observing:
    return to == n::observing || to == n::completed || to == n::failed || to == n::unknown ||
           to == n::submitted;
  case n::unknown:
    return to == n::submitted || to == n::observing || to == n::completed || to == n::failed ||
           to == n::ready;
  case n::failed:
    return to == n::ready; // operator retry
  default:
    return false;
  }
}

bool answer_allowed(executor_step step, node_state next) {
  using n = node_state;
  switch (step) {
  case executor_step::preflight:
    return next == n::failed || next == n::completed || next == n::skipped;
  case executor_step::submit:
  case executor_step::observe:
  case executor_step::recover:
    return next == n::submitted || next == n::observing || next == n::completed ||
           next == n::failed || next == n::unknown;
  case executor_step::prepare:
  case executor_step::sign:
    return false;
  }
  return false;
}

node_state protocol_error_state(executor_step step) {
  switch (step) {
  case executor_step::preflight:
  case executor_step::prepare:
  case executor_step::sign:
    return node_state::failed;
  default:
    return node_state::unknown;
  }
}

std::string_view to_string(executor_step step) {
  switch (step) {
  case executor_step::preflight:
    return "preflight";
  case executor_step::prepare:
    return "prepare";
  case executor_step::sign:
    return "sign";
  case executor_step::submit:
    return "submit";
  case executor_step::observe:
    return "observe";
  case executor_step::recover:
    return "recover";
  }
  return "?";
}

bool settles_at_once(std::string_view error_code) {
  return error_code == "OBSERVATION_TIMEOUT" || error_code == provider_protocol_error_code;
}

} // namespace mg::domain
