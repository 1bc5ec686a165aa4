#pragma once
// reconcile(plan, nodes) → actions (SPEC §1): the only place that activates
// successors, sets the frontier and derives the request state.
#include <optional>
#include <string>
#include <vector>

#include "domain/plan.hpp"
#include "domain/states.hpp"

namespace mg::domain {

/// What reconcile needs to know of one node, in plan order.
struct node_view {
  std::string node_key;
  node_state state = node_state::blocked;
  std::string error_code;
  /// Seconds the node has been UNKNOWN (0 when not UNKNOWN).
  double unknown_for_seconds = 0;
};

struct reconcile_input {
  request_state state = request_state::approved;
  bool dispatch_paused = false;
  bool attention_raised = false;
  std::vector<std::string> frontier;
  std::vector<node_view> nodes; // same order and size as plan.nodes
  double unknown_escalate_seconds = 900;
};

enum class attention_reason {
  none,
  side_effect_at_risk,
  manual_intervention,
  waiting_manual_action
};

struct reconcile_actions {
  std::vector<std::string> activate; // BLOCKED → READY
  bool dispatch_paused = false;      // the value the flag must have
  bool attention_raised = false;     // the value the flag must have
  std::vector<std::string> frontier;
  bool frontier_changed = false;
  std::optional<request_state> new_state;
  attention_reason attention = attention_reason::none;

  bool changes_anything(const reconcile_input& in) const;
};

/// An UNKNOWN node that recovery will no longer act on: escalated, or an
/// observation timeout (settled at once).
bool is_settled_unknown(const node_view& n, double unknown_escalate_seconds);

/// In flight: SUBMITTING, SUBMITTED, OBSERVING, or an UNKNOWN not settled.
bool is_in_flight(const node_view& n, double unknown_escalate_seconds);

/// Whether a node moving from → to may change reconcile's output. Only
/// READY → in flight and in flight → in flight cannot, so they need no
/// reconcile pass.
bool affects_reconcile(node_state from, node_state to);

/// Pure and idempotent: applying the actions and reconciling again yields
/// no further change.
reconcile_actions reconcile(const plan& p, const reconcile_input& in);

} // namespace mg::domain
